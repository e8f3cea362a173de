{#-
    Every receivable's steps of the Simple Interest Method (macros/simple_interest_step.sql), in
    order from its starting state: `starting` has one row per receivable (deal_id, receivable_id,
    step_number, balance_cents, unpaid_interest_cents, fees_due_cents, last_accrual_date, apr_e6),
    `events` one row per transaction (deal_id, receivable_id, step_number counting on from the
    starting one, collection_period, transaction_date, transaction_type, amount_cents). Returns the
    starting rows (transaction_type null) and one row per step, with the step's allocation and the
    state after it, and apr_e6.

    DuckDB: a recursive CTE (the model says `with recursive`), each round taking every receivable
    one step further and joining only the transactions of that round's steps (found by a scan of
    their step numbers), so its memory grows with the receivables, not with their transactions;
    a round computes the step in layers (simple_interest_step_layers).
    Spark: its recursive CTEs are slow and bounded in depth, so each receivable's transactions are
    collected in step order and folded with `aggregate`, the accumulator the list of steps so far.
-#}
{% macro simple_interest_fold(starting, events) -%}
    {{ return(adapter.dispatch('simple_interest_fold', 'caot')(starting, events)) }}
{%- endmacro %}

{% macro default__simple_interest_fold(starting, events) -%}
    select
        deal_id,
        receivable_id,
        apr_e6,
        step_number,
        null::string as collection_period,
        null::string as transaction_type,
        null::bigint as interest_paid_cents,
        null::bigint as fees_paid_cents,
        null::bigint as principal_paid_cents,
        null::bigint as unapplied_cents,
        balance_cents,
        unpaid_interest_cents,
        fees_due_cents,
        last_accrual_date
    from {{ starting }}
    union all
    {%- set round %}
        select
            previous.deal_id,
            previous.receivable_id,
            previous.apr_e6,
            previous.balance_cents,
            previous.unpaid_interest_cents,
            previous.fees_due_cents,
            previous.last_accrual_date,
            txn.step_number,
            txn.collection_period,
            txn.transaction_type,
            txn.transaction_date,
            txn.amount_cents
        from folded as previous
        inner join (
            -- the transactions of the round's steps only: DuckDB builds its hash table on this
            -- side, and one of every transaction, kept for all the rounds, outgrows the memory
            -- limit at shelf scale
            select * from {{ events }}
            where step_number in (select distinct folded.step_number + 1 from folded)
        ) as txn
            on
                previous.deal_id = txn.deal_id
                and previous.receivable_id = txn.receivable_id
                and txn.step_number = previous.step_number + 1
    {%- endset %}
    {{ simple_interest_step_layers(round, ['deal_id', 'receivable_id', 'apr_e6']) }}
{%- endmacro %}

{% macro spark__simple_interest_fold(starting, events) -%}
    {%- set first_step = record({
        'step_number': 'start.step_number',
        'collection_period': 'null::string',
        'transaction_type': 'null::string',
        'interest_paid_cents': 'null::bigint',
        'fees_paid_cents': 'null::bigint',
        'principal_paid_cents': 'null::bigint',
        'unapplied_cents': 'null::bigint',
        'balance_cents': 'start.balance_cents',
        'unpaid_interest_cents': 'start.unpaid_interest_cents',
        'fees_due_cents': 'start.fees_due_cents',
        'last_accrual_date': 'start.last_accrual_date'
    }) -%}
    select
        start.deal_id,
        start.receivable_id,
        {%- for field in ['step_number', 'collection_period', 'transaction_type', 'interest_paid_cents',
            'fees_paid_cents', 'principal_paid_cents', 'unapplied_cents', 'balance_cents',
            'unpaid_interest_cents', 'fees_due_cents', 'last_accrual_date'] %}
        step.{{ field }},
        {%- endfor %}
        start.apr_e6
    from {{ starting }} as start
    left join (
        select
            deal_id,
            receivable_id,
            array_sort(collect_list(named_struct(
                'step_number', step_number,
                'collection_period', collection_period,
                'transaction_date', transaction_date,
                'transaction_type', transaction_type,
                'amount_cents', amount_cents
            ))) as transactions
        from {{ events }}
        group by deal_id, receivable_id
    ) as events_by_receivable
        on start.deal_id = events_by_receivable.deal_id and start.receivable_id = events_by_receivable.receivable_id
    lateral view explode(
        aggregate(
            coalesce(events_by_receivable.transactions, array()),
            array({{ first_step }}),
            (steps, txn) -> concat(steps, array(
                {{ simple_interest_step('element_at(steps, -1)', 'txn', 'start.apr_e6') }}
            ))
        )
    ) steps as step
{%- endmacro %}
