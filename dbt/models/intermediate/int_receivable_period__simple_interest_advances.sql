-- Simple Interest Advances (4.4) per receivable and Collection Period, from the first period the
-- Servicer advanced on the receivable (few receivables): the 4.4(a) limit, the reimbursement the
-- Servicer retains from the receivable's later receipts (4.2), and what becomes an Unreimbursed
-- Servicer Advance. A running fold over each receivable's periods, written as window sums (no
-- recursion); before its first advance a receivable has nothing advanced, retained or owed.
-- Incremental (macros/incremental.sql): a build of a trust from Collection Period P recomputes its
-- rows of P and later; a receivable advanced on before P continues from its last row kept (the
-- running sums below), one first advanced on in P or later is folded over its whole history.
{{ loan_level_incremental_config() }}

with

receivable_periods as {{ not_materialized_cte() }} (
    -- read at each reference with that reference's filters (held whole, every receivable-period
    -- of the shelf would be in memory)
    select * from {{ ref('fct_receivable_period') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

window_periods as (
    select
        deal_id,
        receivable_id,
        period_number,
        simple_interest_advance_amount
    from receivable_periods
    where {{ is_rebuilt() }}
),

seeds as (
    -- each receivable's running sums after its last row kept (none when every row is recomputed)
    {% if is_incremental() %}
        select
            kept.deal_id,
            kept.receivable_id,
            kept.last_kept.advanced_to_date_cents as seed_advanced_cents,
            kept.last_kept.received_to_date_cents as seed_received_cents,
            kept.last_kept.retention_floor_cents as seed_retention_floor_cents,
            kept.last_kept.retained_to_date_cents as seed_retained_cents
        from (
            {{ last_kept_rows({
                'advanced_to_date_cents': 'advanced_to_date_cents',
                'received_to_date_cents': 'received_to_date_cents',
                'retention_floor_cents': 'retention_floor_cents',
                'retained_to_date_cents': 'retained_to_date_cents'
            }, 'period_number', among='window_periods') }}
        ) as kept
    {% else %}
        select
            null::string as deal_id,
            null::string as receivable_id,
            null::bigint as seed_advanced_cents,
            null::bigint as seed_received_cents,
            null::bigint as seed_retention_floor_cents,
            null::bigint as seed_retained_cents
        where false
    {% endif %}
),

first_advances as (
    -- the receivables first advanced on in the rows recomputed (every one on a full build)
    select
        deal_id,
        receivable_id,
        min(period_number) as first_advance_period_number
    from window_periods
    where
        simple_interest_advance_amount <> 0
        and not exists (
            select 1 from seeds
            where seeds.deal_id = window_periods.deal_id and seeds.receivable_id = window_periods.receivable_id
        )
    group by deal_id, receivable_id
),

folded_receivables as (
    select
        deal_id,
        receivable_id,
        first_advance_period_number,
        null::bigint as seed_advanced_cents,
        null::bigint as seed_received_cents,
        null::bigint as seed_retention_floor_cents,
        null::bigint as seed_retained_cents
    from first_advances
    union all
    select
        deal_id,
        receivable_id,
        null::integer as first_advance_period_number,
        seed_advanced_cents,
        seed_received_cents,
        seed_retention_floor_cents,
        seed_retained_cents
    from seeds
),

settlements as (
    -- the period the receivable stops being outstanding (paid in full, purchased or defaulted):
    -- the advances on it are settled then
    select
        deal_id,
        receivable_id,
        min(period_number) as settled_period_number
    from receivable_periods
    where
        not is_outstanding
        and (deal_id, receivable_id) in (
            select
                folded_receivables.deal_id,
                folded_receivables.receivable_id
            from folded_receivables
        )
    group by deal_id, receivable_id
),

history_periods as (
    -- the recomputed periods of the receivables folded: one seeded continues from its last row
    -- kept; one first advanced on in the window is folded from its first advance, a period of the
    -- window (nothing is retained before it: receipts count from it, in_fold below)
    select * from receivable_periods
    where
        {{ is_rebuilt() }}
        and (deal_id, receivable_id) in (
            select
                folded_receivables.deal_id,
                folded_receivables.receivable_id
            from folded_receivables
        )
),

history as (
    select
        periods.deal_id,
        periods.receivable_id,
        periods.collection_period,
        periods.period_number,
        folded.first_advance_period_number,
        folded.seed_advanced_cents,
        folded.seed_received_cents,
        folded.seed_retention_floor_cents,
        folded.seed_retained_cents,
        settlements.settled_period_number,
        {{ to_cents('periods.simple_interest_advance_amount') }} as advance_cents,
        -- 4.2: every amount received on or in respect of the receivable, Liquidation Proceeds and
        -- a Purchase Amount included (late fees are Supplemental Servicing Fees, not collections)
        {{ to_cents('periods.interest_collected_amount + periods.principal_collected_amount
            + periods.rebate_principal_amount + periods.liquidation_proceeds_amount
            + periods.purchase_principal_amount + periods.purchase_interest_amount') }}
            as received_cents,
        -- 4.4(a): only for a receivable outstanding at the period end, not a Defaulted (or
        -- Purchased) Receivable, with a payment of Monthly P&I due and not received
        periods.is_outstanding and not periods.is_defaulted and not periods.is_purchased
        and periods.days_past_due > 0 as is_advance_eligible,
        -- 4.4(a): the interest scheduled for the Collection Period had the obligor paid on the due
        -- date (the Simple Interest Method over the period's days on its beginning Principal
        -- Balance), less the interest actually received in it
        greatest(
            {{ simple_interest_cents(to_cents('periods.beginning_balance'),
                apr_e6('schedule.apr'),
                days_between('calendar.collection_period_start_date', 'calendar.collection_period_end_date') ~ ' + 1') }}
            - {{ to_cents('periods.interest_collected_amount') }},
            0
        ) as scheduled_interest_shortfall_cents
    from history_periods as periods
    inner join folded_receivables as folded
        on periods.deal_id = folded.deal_id and periods.receivable_id = folded.receivable_id
    inner join calendar
        on periods.deal_id = calendar.deal_id and periods.collection_period = calendar.collection_period
    inner join schedule
        on periods.deal_id = schedule.deal_id and periods.receivable_id = schedule.receivable_id
    left join settlements
        on periods.deal_id = settlements.deal_id and periods.receivable_id = settlements.receivable_id
),

in_fold as (
    -- receipts after the settled period are not retained, and an advance after it is not carried;
    -- receipts before the first advance reimburse nothing (4.2: no advance outstanding), so they
    -- are not counted (a full build and a window build fold the same receipts)
    select
        *,
        case when is_advance_eligible then scheduled_interest_shortfall_cents else 0 end
            as advance_limit_cents,
        case when period_number > settled_period_number then 0 else advance_cents end
            as folded_advance_cents,
        case
            when period_number > settled_period_number then 0
            when period_number < first_advance_period_number then 0
            else received_cents
        end as folded_received_cents
    from history
),

running as (
    select
        *,
        coalesce(seed_advanced_cents, 0) + sum(folded_advance_cents) over through_now
            as advanced_to_date_cents,
        coalesce(seed_advanced_cents, 0) + coalesce(sum(folded_advance_cents) over before_now, 0)
            as advanced_before_cents,
        coalesce(seed_received_cents, 0) + sum(folded_received_cents) over through_now
            as received_to_date_cents
    from in_fold
    window
        before_now as (
            partition by deal_id, receivable_id order by period_number
            rows between unbounded preceding and 1 preceding
        ),
        through_now as (
            partition by deal_id, receivable_id order by period_number
            rows between unbounded preceding and current row
        )
),

floored as (
    -- Retained in period p: r_p = least(outstanding before p, received in p). Unrolled, the
    -- retention to date is R_p = C_p + min over q <= p of (S_(q-1) - C_q), with S the advances to
    -- date and C the receipts to date: a running minimum (the floor), no recursion
    select
        *,
        least(
            coalesce(seed_retention_floor_cents, running_floor_cents), running_floor_cents
        ) as retention_floor_cents
    from (
        select
            *,
            min(advanced_before_cents - received_to_date_cents) over (
                partition by deal_id, receivable_id order by period_number
                rows between unbounded preceding and current row
            ) as running_floor_cents
        from running
    ) as with_running_floor
),

folded as (
    select
        *,
        coalesce(
            lag(received_to_date_cents + retention_floor_cents)
                over (partition by deal_id, receivable_id order by period_number),
            seed_retained_cents,
            0
        ) as retained_before_cents,
        received_to_date_cents + retention_floor_cents as retained_to_date_cents
    from floored
),

final as (
    select
        deal_id,
        receivable_id,
        collection_period,
        period_number,
        is_advance_eligible,
        {{ from_cents('advance_limit_cents') }} as advance_limit_amount,
        {{ from_cents('advance_cents') }} as simple_interest_advance_amount,
        {{ from_cents('retained_to_date_cents - retained_before_cents') }} as reimbursement_retained_amount,
            -- Art. I "Unreimbursed Servicer Advance": the Servicer's determination is not on the
            -- tapes; what is unreimbursed when the receivable is settled is taken as unrecoverable
            -- then and paid under 4.6(a)(ii) (Exhibit A line 27); so is an advance made after that
            -- (beyond 4.4(a) too)
        {{ from_cents('case
            when period_number = settled_period_number then advanced_to_date_cents - retained_to_date_cents
            when period_number > settled_period_number then advance_cents
            else 0 end') }}
            as unreimbursed_servicer_advance_amount,
        {{ from_cents('case when period_number >= settled_period_number then 0
            else advanced_to_date_cents - retained_to_date_cents end') }}
            as outstanding_advance_amount,
        advance_cents > advance_limit_cents as is_advance_over_limit,
        -- the running sums the next incremental build continues from
        advanced_to_date_cents,
        received_to_date_cents,
        retention_floor_cents,
        retained_to_date_cents
    from folded
    -- the rows recomputed, from the receivable's first advance
    where
        period_number >= coalesce(first_advance_period_number, period_number)
        and {{ is_rebuilt() }}
)

select * from final
