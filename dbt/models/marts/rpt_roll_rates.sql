-- Roll rates and the transition matrix: for each trust and Collection Period, where the
-- receivables outstanding at the end of the period before went, by count and by their balance
-- then (the cutoff for the first period). States: current, 1-30, 31-60, 61-90 and 91-120 days
-- past due (Art. I "Defaulted Receivable" takes the 120+ as defaulted), defaulted, repurchased
-- (2.4, 3.7), paid to maturity (paid off in or after its maturity month) and prepaid (before it).
-- Shares are exact (integer cents or counts, half up at ten decimals, money.sql's percent_of).
-- Incremental (macros/incremental.sql): a period's transitions need only its own and the period
-- before's receivable-periods, so a build recomputes the trusts' periods of its window (from
-- their receivable-periods and the period before's) and keeps the others.
{{ loan_level_incremental_config() }}

with

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

periods as (
    -- the build's periods and, for their transitions, the period before each
    select * from {{ ref('fct_receivable_period') }}
    where
        {{ from_month_before_window() }}
        and (
            {{ is_rebuilt() }}
            or (deal_id, collection_period) in (
                select
                    before.deal_id,
                    before.collection_period
                from calendar as before
                inner join calendar as rebuilt
                    on before.deal_id = rebuilt.deal_id and before.period_number = rebuilt.period_number - 1
                where {{ is_rebuilt('rebuilt.deal_id', 'rebuilt.collection_period') }}
            )
        )
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

states as (
    select
        periods.deal_id,
        periods.receivable_id,
        periods.collection_period,
        periods.period_number,
        periods.ending_balance,
        case
            when periods.is_default_period then 'defaulted'
            when periods.is_purchase_period then 'repurchased'
            when
                periods.ending_balance = 0
                and calendar.collection_period_end_date >= date_trunc('month', periods.maturity_date)
                then 'paid to maturity'
            when periods.ending_balance = 0 then 'prepaid'
            else {{ delinquency_state('periods.days_past_due') }}
        end as state
    from periods
    inner join calendar
        on periods.deal_id = calendar.deal_id and periods.collection_period = calendar.collection_period
),

transitions as (
    select
        current_state.deal_id,
        current_state.collection_period,
        current_state.period_number,
        coalesce(current_state.prior_state, {{ delinquency_state('schedule.cutoff_days_past_due') }}) as from_state,
        current_state.state as to_state,
        {{ to_cents('coalesce(current_state.prior_ending_balance, schedule.cutoff_principal_balance)') }}
            as from_balance_cents
    from (
        -- each receivable-period with the receivable's state at the end of the period before
        -- (its row of that period, when it has one)
        select
            *,
            case when lag(period_number) over by_period = period_number - 1 then lag(state) over by_period end
                as prior_state,
            case when lag(period_number) over by_period = period_number - 1 then lag(ending_balance) over by_period end
                as prior_ending_balance
        from states
        window by_period as (partition by deal_id, receivable_id order by period_number)
    ) as current_state
    inner join schedule
        on current_state.deal_id = schedule.deal_id and current_state.receivable_id = schedule.receivable_id
    -- outstanding at the end of the period before (every receivable of the schedule at the cutoff)
    where
        {{ is_rebuilt('current_state.deal_id', 'current_state.collection_period') }}
        and (
            (current_state.period_number = 1 and current_state.prior_state is null)
            or current_state.prior_ending_balance > 0
        )
),

counted as (
    select
        deal_id,
        collection_period,
        period_number,
        from_state,
        to_state,
        count(*) as receivable_count,
        sum(from_balance_cents) as from_balance_cents
    from transitions
    group by deal_id, collection_period, period_number, from_state, to_state
)

select
    deal_id,
    collection_period,
    period_number,
    from_state,
    to_state,
    receivable_count,
    {{ from_cents('from_balance_cents') }} as from_balance,
    {{ percent_of('receivable_count', 'sum(receivable_count) over (partition by deal_id, period_number, from_state)') }}
        as count_share_percent,
    {{ percent_of('from_balance_cents', 'sum(from_balance_cents) over (partition by deal_id, period_number, from_state)') }}
        as balance_share_percent
from counted
