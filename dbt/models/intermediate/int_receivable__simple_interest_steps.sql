-- Principal Balance by the Simple Interest Method (Art. I "Simple Interest Method", "Principal
-- Balance"; 4.3), recomputed transaction by transaction from the Cutoff Date.
-- Interest accrues at APR x Principal Balance x actual days / 365 between balance-changing
-- events (payments and rebates), rounded half up to the cent at each event. A payment pays the
-- accrued interest first, then assessed late fees, then principal; a rebate of a financed item
-- reduces principal directly (Art. I "Principal Balance" (ii)). Money is integer cents here.
with

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

transactions as (
    select * from {{ ref('stg_servicer__payment_transactions') }}
),

balance_events as (
    select
        receivable_id,
        collection_period,
        transaction_date,
        transaction_type,
        {{ to_cents('transaction_amount') }}::bigint as amount_cents,
        row_number() over (
            partition by receivable_id
            order by
                transaction_date,
                case transaction_type when 'late_fee' then 0 when 'rebate' then 1 else 2 end,
                transaction_amount
        ) as step_number
    from transactions
    where transaction_type in ('payment', 'rebate', 'late_fee')
),

histories as (
    -- each receivable's payments, rebates and late fees in the order they apply
    select
        receivable_id,
        list({
            'step_number': step_number,
            'collection_period': collection_period,
            'transaction_date': transaction_date,
            'transaction_type': transaction_type,
            'amount_cents': amount_cents
        } order by step_number) as events
    from balance_events
    group by receivable_id
),

folded as (
    -- one pass over each receivable's history (list_reduce), from its state at the Cutoff Date
    select
        schedule.receivable_id,
        schedule.cutoff_last_payment_date,
        {{ to_cents('schedule.cutoff_principal_balance') }}::bigint as cutoff_balance_cents,
        list_reduce(
            coalesce(histories.events, []),
            lambda state, event: {{ simple_interest_step('state', 'event') }},
            {
                'balance_cents': {{ to_cents('schedule.cutoff_principal_balance') }}::bigint,
                'unpaid_interest_cents': 0::bigint,
                'fees_due_cents': 0::bigint,
                'last_accrual_date': schedule.cutoff_last_payment_date,
                'apr_e6': (schedule.apr * 1000000)::bigint,
                -- the allocation of every step (only what the period figures need: the list is
                -- copied as it grows)
                'steps': []::struct(
                    step_number bigint, collection_period varchar, transaction_type varchar,
                    interest_paid_cents bigint, fees_paid_cents bigint, principal_paid_cents bigint,
                    unapplied_cents bigint, balance_cents bigint, unpaid_interest_cents bigint,
                    last_accrual_date date
                )[]
            }
        ).steps as steps
    from schedule
    left join histories on schedule.receivable_id = histories.receivable_id
),

cutoff_steps as (
    -- step 0: the receivable as the Receivable Schedule shows it at the Cutoff Date
    select
        receivable_id,
        0::bigint as step_number,
        null::varchar as collection_period,
        'cutoff' as transaction_type,
        0::bigint as interest_paid_cents,
        0::bigint as fees_paid_cents,
        0::bigint as principal_paid_cents,
        0::bigint as unapplied_cents,
        cutoff_balance_cents as balance_cents,
        0::bigint as unpaid_interest_cents,
        cutoff_last_payment_date as last_accrual_date
    from folded
),

transaction_steps as (
    select
        receivable_id,
        unnest(steps, recursive := true)
    from folded
),

final as (
    select * from cutoff_steps
    union all by name
    select * from transaction_steps
)

select * from final
