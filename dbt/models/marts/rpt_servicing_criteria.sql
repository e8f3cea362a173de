-- One row per Collection Period: the servicing criteria of Regulation AB Item 1122(d) (Exhibit D)
-- and the servicing covenants that the data can show, each as a count or an amount that is zero
-- when the period complies. The Great Expectations tape suite validates these columns (one
-- expectation each) and a failure withholds the period's certificate; dbt tests hold the
-- waterfall's own invariants (sources equal uses, seniority) at zero on every build.
with

period_totals as (
    -- counts over each Collection Period's receivable-periods (incremental)
    select * from {{ ref('int_collection_period__receivable_totals') }}
),

reconciliation as (
    select * from {{ ref('rpt_balance_reconciliation') }}
),

repurchases as (
    select * from {{ ref('fct_repurchase') }}
),

waterfall_dates as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
),

waterfall_steps as (
    select * from {{ ref('fct_waterfall') }}
),

notes as (
    select * from {{ ref('fct_note_distribution') }}
),

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

loaded_periods as (
    select collection_period from period_totals
),

earlier_gaps as (
    -- every earlier Collection Period's tape is loaded: a period that arrives before the one
    -- ahead of it (or after a missing one) cannot be computed, since balances carry forward
    select
        calendar.collection_period,
        count(earlier.collection_period) filter (where loaded.collection_period is null)
            as missing_earlier_period_count
    from calendar
    inner join loaded_periods on calendar.collection_period = loaded_periods.collection_period
    inner join calendar as earlier on calendar.period_number > earlier.period_number
    left join loaded_periods as loaded on earlier.collection_period = loaded.collection_period
    group by calendar.collection_period
),

balance_mismatches as (
    -- 1122(d)(4)(v): the servicer's Principal Balances agree with the Simple Interest Method
    select
        collection_period,
        count(distinct receivable_id) as balance_mismatch_count
    from reconciliation
    group by collection_period
),

repurchase_exceptions as (
    -- 2.4 (1122(d)(4)(iii)): breaches are repurchased when and for the amount the agreement says
    select
        collection_period,
        count(*) filter (where not is_as_agreed) as repurchase_exception_count
    from repurchases
    group by collection_period
),

funds_applied as (
    select
        distribution_date,
        sum(amount_paid) filter (where funded_from = 'available_funds') as paid_from_available_funds
    from waterfall_steps
    group by distribution_date
),

waterfall_measures as (
    -- 1122(d)(3)(ii): amounts due to investors allocated in the priority of payments
    select
        waterfall_dates.distribution_date,
        -- Available Funds (Available Collections plus the Reserve Account Draw Amount) are exactly
        -- what the priority of payments pays plus the Excess Collections
        {{ from_cents(
            'waterfall_dates.available_funds - ' ~ to_cents('funds_applied.paid_from_available_funds')
        ) }} as sources_minus_uses_amount,
        {{ from_cents(
            'waterfall_dates.available_collections_cents + waterfall_dates.reserve_draw'
            ' - waterfall_dates.available_funds') }} as available_funds_difference_amount,
        -- the Reserve Account rolls forward from its beginning to its ending balance (4.7)
        {{ from_cents(
            'waterfall_dates.reserve_beginning_balance + waterfall_dates.reserve_earnings_cents'
            ' - waterfall_dates.reserve_draw + waterfall_dates.paid_reserve_deposit'
            ' - waterfall_dates.reserve_to_principal - waterfall_dates.reserve_to_successor_servicer'
            ' - waterfall_dates.reserve_to_certificateholder - waterfall_dates.reserve_balance_end') }}
            as reserve_roll_forward_difference_amount
    from waterfall_dates
    inner join funds_applied on waterfall_dates.distribution_date = funds_applied.distribution_date
),

seniority as (
    -- Indenture 2.8(d): no class is paid principal while a class ahead of it in the principal
    -- order still has a balance after the distribution
    select
        junior.distribution_date,
        count(*) as seniority_violation_count
    from notes as junior
    inner join classes as junior_class on junior.class_id = junior_class.class_id
    inner join notes as senior on junior.distribution_date = senior.distribution_date
    inner join classes as senior_class
        on
            senior.class_id = senior_class.class_id
            and junior_class.principal_order > senior_class.principal_order
    where junior.principal_paid_amount > 0 and senior.ending_balance > 0
    group by junior.distribution_date
),

final as (
    select
        -- ids
        calendar.collection_period,
        calendar.period_number,
        -- dates
        calendar.distribution_date,
        -- measures (zero when the period complies)
        period_totals.receivable_periods_tested,
        period_totals.not_recomputed_count,
        coalesce(balance_mismatches.balance_mismatch_count, 0) as balance_mismatch_count,
        period_totals.servicer_roll_forward_break_count,
        period_totals.servicer_continuity_break_count,
        period_totals.missing_receivable_count,
        coalesce(earlier_gaps.missing_earlier_period_count, 0) as missing_earlier_period_count,
        period_totals.charge_off_mismatch_count,
        period_totals.extension_beyond_final_date_count,
        coalesce(repurchase_exceptions.repurchase_exception_count, 0) as repurchase_exception_count,
        waterfall_measures.sources_minus_uses_amount,
        waterfall_measures.available_funds_difference_amount,
        waterfall_measures.reserve_roll_forward_difference_amount,
        coalesce(seniority.seniority_violation_count, 0) as seniority_violation_count
    from period_totals
    inner join calendar on period_totals.collection_period = calendar.collection_period
    left join balance_mismatches on period_totals.collection_period = balance_mismatches.collection_period
    left join earlier_gaps on period_totals.collection_period = earlier_gaps.collection_period
    left join repurchase_exceptions on period_totals.collection_period = repurchase_exceptions.collection_period
    left join waterfall_measures on calendar.distribution_date = waterfall_measures.distribution_date
    left join seniority on calendar.distribution_date = seniority.distribution_date
)

select * from final
