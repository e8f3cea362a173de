-- Simple Interest Advances (4.4) per receivable and Collection Period, for the receivables the
-- Servicer ever advanced on (few): the 4.4(a) limit, the reimbursement the Servicer retains from
-- the receivable's later receipts (4.2), and what becomes an Unreimbursed Servicer Advance.
-- Rebuilt whole each run from fct_receivable_period (a running fold over each receivable's
-- periods, written as window sums: no recursion).
with

receivable_periods as (
    select * from {{ ref('fct_receivable_period') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

advanced as (
    select distinct
        deal_id,
        receivable_id
    from receivable_periods
    where simple_interest_advance_amount <> 0
),

history as (
    select
        periods.deal_id,
        periods.receivable_id,
        periods.collection_period,
        periods.period_number,
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
        ) as scheduled_interest_shortfall_cents,
        -- the period the receivable stops being outstanding (paid in full, purchased or
        -- defaulted): the advances on it are settled then
        min(case when not periods.is_outstanding then periods.period_number end)
            over (partition by periods.deal_id, periods.receivable_id) as settled_period_number
    from receivable_periods as periods
    inner join advanced
        on periods.deal_id = advanced.deal_id and periods.receivable_id = advanced.receivable_id
    inner join calendar
        on periods.deal_id = calendar.deal_id and periods.collection_period = calendar.collection_period
    inner join schedule
        on periods.deal_id = schedule.deal_id and periods.receivable_id = schedule.receivable_id
),

in_fold as (
    -- receipts after the settled period are not retained, and an advance after it is not carried
    select
        *,
        case when is_advance_eligible then scheduled_interest_shortfall_cents else 0 end
            as advance_limit_cents,
        case when period_number > settled_period_number then 0 else advance_cents end
            as folded_advance_cents,
        case when period_number > settled_period_number then 0 else received_cents end
            as folded_received_cents
    from history
),

running as (
    select
        *,
        sum(folded_advance_cents) over through_now as advanced_to_date_cents,
        coalesce(sum(folded_advance_cents) over before_now, 0) as advanced_before_cents,
        sum(folded_received_cents) over through_now as received_to_date_cents
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

folded as (
    -- Retained in period p: r_p = least(outstanding before p, received in p). Unrolled, the
    -- retention to date is R_p = C_p + min over q <= p of (S_(q-1) - C_q), with S the advances to
    -- date and C the receipts to date: a running minimum, no recursion
    select
        *,
        received_to_date_cents
        + min(advanced_before_cents - received_to_date_cents) over (
            partition by deal_id, receivable_id order by period_number
            rows between unbounded preceding and current row
        ) as retained_to_date_cents
    from running
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
        {{ from_cents('retained_to_date_cents - coalesce(lag(retained_to_date_cents)
            over (partition by deal_id, receivable_id order by period_number), 0)') }}
            as reimbursement_retained_amount,
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
        advance_cents > advance_limit_cents as is_advance_over_limit
    from folded
)

select * from final
