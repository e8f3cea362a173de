{#-
    One transaction of the Simple Interest Method (Art. I; 4.3) as one expression: from `state`
    (balance, unpaid interest, late fees due, last accrual date), the receivable's APR in millionths
    (`apr_e6`) and `event` (a payment, rebate or late fee, with its step number and Collection
    Period) to the step, a struct of the transaction's allocation and the state after it.
    Interest accrues at APR x balance x actual days / 365, half up, at each payment or rebate; a
    payment pays interest, then late fees, then principal; a rebate reduces principal directly.
    Intermediate amounts are bound with macros/portable.sql `let` (SQL has no `let`).
-#}
{% macro simple_interest_step(state, event, apr_e6) -%}
{%- set kind = event ~ '.transaction_type' -%}
{%- set amount = event ~ '.amount_cents' -%}
{%- set step -%}
    {{ record({
        'step_number': event ~ '.step_number',
        'collection_period': event ~ '.collection_period',
        'transaction_type': kind,
        'interest_paid_cents': 'interest_paid',
        'fees_paid_cents': 'fees_paid',
        'principal_paid_cents': 'principal_paid',
        'unapplied_cents': amount ~ ' - interest_paid - fees_paid - principal_paid'
            ~ " - case when " ~ kind ~ " = 'late_fee' then " ~ amount ~ ' else 0 end',
        'balance_cents': state ~ '.balance_cents - principal_paid',
        'unpaid_interest_cents': 'owed - interest_paid',
        'fees_due_cents': 'fees_owed - fees_paid',
        'last_accrual_date': "case when " ~ kind ~ " = 'late_fee' then " ~ state ~ '.last_accrual_date else '
            ~ event ~ '.transaction_date end'
    }) }}
{%- endset -%}
{%- set principal_paid -%}
    case
        when {{ kind }} = 'payment' then least({{ amount }} - interest_paid - fees_paid, {{ state }}.balance_cents)
        when {{ kind }} = 'rebate' then least({{ amount }}, {{ state }}.balance_cents)
        else 0::bigint
    end
{%- endset -%}
{%- set fees_paid -%}
    case when {{ kind }} = 'payment' then least({{ amount }} - interest_paid, fees_owed) else 0::bigint end
{%- endset -%}
{%- set interest_paid -%}
    case when {{ kind }} = 'payment' then least({{ amount }}, owed) else 0::bigint end
{%- endset -%}
{%- set fees_owed -%}
    {{ state }}.fees_due_cents + case when {{ kind }} = 'late_fee' then {{ amount }} else 0::bigint end
{%- endset -%}
{%- set accrued -%}
    case when {{ kind }} = 'late_fee' then 0::bigint
    else {{ simple_interest_cents(state ~ '.balance_cents', apr_e6,
        days_between(state ~ '.last_accrual_date', event ~ '.transaction_date')) }}::bigint end
{%- endset -%}
{{ let('accrued', accrued,
    let('owed', state ~ '.unpaid_interest_cents + accrued',
    let('fees_owed', fees_owed,
    let('interest_paid', interest_paid,
    let('fees_paid', fees_paid,
    let('principal_paid', principal_paid, step)))))) }}
{%- endmacro %}
