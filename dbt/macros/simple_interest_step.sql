{#-
    One transaction of the Simple Interest Method (Art. I; 4.3) as one expression: from `state`
    (balance, unpaid interest, late fees due, last accrual date, APR) and `event` (a payment,
    rebate or late fee, with its step number and Collection Period) to the step, a struct of the
    transaction's allocation and the state after it.
    Interest accrues at APR x balance x actual days / 365, half up, at each payment or rebate; a
    payment pays interest, then late fees, then principal; a rebate reduces principal directly.
    Intermediate amounts are bound with one-element list_transform calls (SQL has no `let`).
-#}
{% macro simple_interest_step(state, event) -%}
list_transform([case when {{ event }}.transaction_type = 'late_fee' then 0::bigint
    else {{ simple_interest_cents(state ~ '.balance_cents', state ~ '.apr_e6',
        event ~ '.transaction_date - ' ~ state ~ '.last_accrual_date') }}::bigint end],
lambda accrued: list_transform([{{ state }}.unpaid_interest_cents + accrued],
lambda owed: list_transform([{{ state }}.fees_due_cents
    + case when {{ event }}.transaction_type = 'late_fee' then {{ event }}.amount_cents else 0 end],
lambda fees_owed: list_transform([case when {{ event }}.transaction_type = 'payment'
    then least({{ event }}.amount_cents, owed) else 0 end],
lambda interest_paid: list_transform([case when {{ event }}.transaction_type = 'payment'
    then least({{ event }}.amount_cents - interest_paid, fees_owed) else 0 end],
lambda fees_paid: list_transform([case
    when {{ event }}.transaction_type = 'payment'
        then least({{ event }}.amount_cents - interest_paid - fees_paid, {{ state }}.balance_cents)
    when {{ event }}.transaction_type = 'rebate' then least({{ event }}.amount_cents, {{ state }}.balance_cents)
    else 0 end],
lambda principal_paid: {
    'step_number': {{ event }}.step_number,
    'collection_period': {{ event }}.collection_period,
    'transaction_type': {{ event }}.transaction_type,
    'interest_paid_cents': interest_paid,
    'fees_paid_cents': fees_paid,
    'principal_paid_cents': principal_paid,
    'unapplied_cents': {{ event }}.amount_cents - interest_paid - fees_paid - principal_paid
        - case when {{ event }}.transaction_type = 'late_fee' then {{ event }}.amount_cents else 0 end,
    'balance_cents': {{ state }}.balance_cents - principal_paid,
    'unpaid_interest_cents': owed - interest_paid,
    'fees_due_cents': fees_owed - fees_paid,
    'last_accrual_date': case when {{ event }}.transaction_type = 'late_fee'
        then {{ state }}.last_accrual_date else {{ event }}.transaction_date end
})[1])[1])[1])[1])[1])[1]
{%- endmacro %}
