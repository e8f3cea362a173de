-- Principal Balance by the Simple Interest Method (Art. I "Simple Interest Method", "Principal
-- Balance"; 4.3), recomputed transaction by transaction from the Cutoff Date.
-- Interest accrues at APR x Principal Balance x actual days / 365 between balance-changing
-- events (payments and rebates), rounded half up to the cent at each event. A payment pays the
-- accrued interest first, then assessed late fees, then principal; a rebate of a financed item
-- reduces principal directly (Art. I "Principal Balance" (ii)). Money is integer cents here.
-- The transactions come numbered in the order they apply (int_receivable__balance_events).
-- Incremental (macros/incremental.sql): a build of a trust from Collection Period P folds only the
-- transactions of P and later, each receivable starting from its state after its last step
-- before P.
{{ loan_level_incremental_config() }}

with recursive

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

balance_events as {{ not_materialized_cte() }} (
    -- the transactions in the order they apply, numbered on from each receivable's kept steps
    -- (read from the table at each reference: a CTE computed once is held in memory whole)
    select * from {{ ref('int_receivable__balance_events') }}
    where {{ is_rebuilt() }}
),

prior_state as (
    -- each receivable's state after its last step kept (none when every row is recomputed)
    {% if is_incremental() %}
        select
            kept.deal_id,
            kept.receivable_id,
            kept.last_kept.step_number as last_step_number,
            kept.last_kept.balance_cents,
            kept.last_kept.unpaid_interest_cents,
            kept.last_kept.fees_due_cents,
            kept.last_kept.last_accrual_date
        from (
            {{ last_kept_rows({
                'step_number': 'step_number',
                'balance_cents': 'balance_cents',
                'unpaid_interest_cents': 'unpaid_interest_cents',
                'fees_due_cents': 'fees_due_cents',
                'last_accrual_date': 'last_accrual_date'
            }, 'step_number', among='balance_events') }}
        ) as kept
    {% else %}
        select
            null::string as deal_id,
            null::string as receivable_id,
            null::bigint as last_step_number,
            null::bigint as balance_cents,
            null::bigint as unpaid_interest_cents,
            null::bigint as fees_due_cents,
            null::date as last_accrual_date
        where false
    {% endif %}
),

to_fold as (
    {% if is_incremental() %}
        -- a receivable with no transaction in the window has nothing to fold, and its step 0 is
        -- kept; one with no step 0 yet (its trust's first build) starts at the Cutoff Date
        select
            schedule.deal_id,
            schedule.receivable_id
        from schedule
        where
            exists (
                select 1 from balance_events
                where balance_events.deal_id = schedule.deal_id and balance_events.receivable_id = schedule.receivable_id
            )
            or not exists (
                select 1 from {{ this }} as previous_build
                where
                    previous_build.step_number = 0
                    and previous_build.deal_id = schedule.deal_id
                    and previous_build.receivable_id = schedule.receivable_id
            )
    {% else %}
        select
            schedule.deal_id,
            schedule.receivable_id
        from schedule
    {% endif %}
),

starting as (
    -- where each fold starts: the state kept from the last build, or the Cutoff Date
    select
        schedule.deal_id,
        schedule.receivable_id,
        prior_state.receivable_id is null as is_new,
        coalesce(prior_state.last_step_number, 0)::bigint as step_number,
        coalesce(prior_state.balance_cents, {{ to_cents('schedule.cutoff_principal_balance') }}::bigint)
            as balance_cents,
        coalesce(prior_state.unpaid_interest_cents, 0)::bigint as unpaid_interest_cents,
        coalesce(prior_state.fees_due_cents, 0)::bigint as fees_due_cents,
        coalesce(prior_state.last_accrual_date, schedule.cutoff_last_payment_date) as last_accrual_date,
        {{ apr_e6('schedule.apr') }} as apr_e6
    from schedule
    left join prior_state
        on schedule.deal_id = prior_state.deal_id and schedule.receivable_id = prior_state.receivable_id
    -- the trusts this build recomputes (the others keep their rows)
    where
        schedule.deal_id in (select distinct balance_events.deal_id from balance_events)
        and (schedule.deal_id, schedule.receivable_id) in (
            select
                to_fold.deal_id,
                to_fold.receivable_id
            from to_fold
        )
),

folded as (
    -- the starting state, then one step per transaction, in order: the state after step n and the
    -- transaction of step n + 1 give the state after step n + 1 (macros/simple_interest_fold.sql)
    {{ simple_interest_fold('starting', 'balance_events') }}
),

cutoff_steps as (
    -- step 0: the receivable as the Receivable Schedule shows it at the Cutoff Date
    select
        deal_id,
        receivable_id,
        0::bigint as step_number,
        null::string as collection_period,
        'cutoff' as transaction_type,
        0::bigint as interest_paid_cents,
        0::bigint as fees_paid_cents,
        0::bigint as principal_paid_cents,
        0::bigint as unapplied_cents,
        balance_cents,
        0::bigint as unpaid_interest_cents,
        0::bigint as fees_due_cents,
        last_accrual_date
    from starting
    where is_new
),

transaction_steps as (
    select
        deal_id,
        receivable_id,
        step_number,
        collection_period,
        transaction_type,
        interest_paid_cents,
        fees_paid_cents,
        principal_paid_cents,
        unapplied_cents,
        balance_cents,
        unpaid_interest_cents,
        fees_due_cents,
        last_accrual_date
    from folded
    where transaction_type is not null  -- the starting states are not steps
),

final as (
    select * from cutoff_steps
    union all
    select * from transaction_steps
)

select * from final
