{#-
    One transaction of the Simple Interest Method (Art. I; 4.3): from `state` (balance, unpaid
    interest, late fees due, last accrual date), the receivable's APR in millionths (`apr_e6`) and
    `event` (a payment, rebate or late fee, with its step number and Collection Period) to the
    transaction's allocation and the state after it.
    Interest accrues at APR x balance x actual days / 365, half up, at each payment or rebate; a
    payment pays interest, then late fees, then principal; a rebate reduces principal directly.

    The rule is written once, as its intermediate amounts in order (simple_interest_step_terms,
    each may use the ones before it by name) and the step's fields from them
    (simple_interest_step_fields). Two renderings:
      - simple_interest_step: one expression, a struct of the fields, the intermediate amounts bound
        with macros/portable.sql `let` (for a fold inside a lambda: Spark's `aggregate`);
      - simple_interest_step_layers: a query adding one intermediate amount per layer to the rows of
        `rows` (each carrying the state's and the event's columns), then the fields: DuckDB computes
        each layer for a whole vector at once, where `let` builds a one-element list per row and amount.
-#}

{% macro simple_interest_step_terms(state, event, apr_e6) -%}
    {%- set kind = event ~ '.transaction_type' -%}
    {%- set amount = event ~ '.amount_cents' -%}
    {{ return([
        ['accrued', "case when " ~ kind ~ " = 'late_fee' then 0::bigint else "
            ~ simple_interest_cents(state ~ '.balance_cents', apr_e6,
                days_between(state ~ '.last_accrual_date', event ~ '.transaction_date'))
            ~ '::bigint end'],
        ['owed', state ~ '.unpaid_interest_cents + accrued'],
        ['fees_owed', state ~ '.fees_due_cents + case when ' ~ kind ~ " = 'late_fee' then " ~ amount
            ~ ' else 0::bigint end'],
        ['interest_paid', 'case when ' ~ kind ~ " = 'payment' then least(" ~ amount
            ~ ', owed) else 0::bigint end'],
        ['fees_paid', 'case when ' ~ kind ~ " = 'payment' then least(" ~ amount
            ~ ' - interest_paid, fees_owed) else 0::bigint end'],
        ['principal_paid', 'case when ' ~ kind ~ " = 'payment' then least(" ~ amount
            ~ ' - interest_paid - fees_paid, ' ~ state ~ '.balance_cents) when ' ~ kind
            ~ " = 'rebate' then least(" ~ amount ~ ', ' ~ state ~ '.balance_cents) else 0::bigint end']
    ]) }}
{%- endmacro %}

{% macro simple_interest_step_fields(state, event) -%}
    {%- set kind = event ~ '.transaction_type' -%}
    {%- set amount = event ~ '.amount_cents' -%}
    {{ return({
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
{%- endmacro %}

{% macro simple_interest_step(state, event, apr_e6) -%}
    {%- set ns = namespace(expression=record(simple_interest_step_fields(state, event))) -%}
    {%- for name, term in simple_interest_step_terms(state, event, apr_e6) | reverse -%}
        {%- set ns.expression = let(name, term, ns.expression) -%}
    {%- endfor -%}
    {{ ns.expression }}
{%- endmacro %}

{#- `rows`: a query whose rows carry the state's columns (balance_cents, unpaid_interest_cents,
    fees_due_cents, last_accrual_date), the event's (step_number, collection_period,
    transaction_type, transaction_date, amount_cents), apr_e6, and `keys`; the result: the keys
    and the step's fields. -#}
{% macro simple_interest_step_layers(rows, keys) -%}
    {%- set ns = namespace(query=rows) -%}
    {%- for name, term in simple_interest_step_terms('step', 'step', 'step.apr_e6') -%}
        {%- set ns.query = 'select step.*, ' ~ term ~ ' as ' ~ name ~ ' from (' ~ ns.query ~ ') as step' -%}
    {%- endfor -%}
    select
        {%- for key in keys %}
        step.{{ key }},
        {%- endfor %}
        {%- for name, expression in simple_interest_step_fields('step', 'step').items() %}
        {{ expression }} as {{ name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from ({{ ns.query }}) as step
{%- endmacro %}
