-- One row per trust and Collection Period computed: the servicing criteria of Regulation AB Item
-- 1122(d) (Exhibit D) and the servicing covenants that the data can show, each as a count or an
-- amount that is zero when the period complies. The Great Expectations servicing suite validates
-- these columns (one expectation each) and a failure withholds the period's certificate; dbt
-- tests hold the waterfall's own invariants (sources equal uses, seniority) at zero on every
-- build.
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

dates as (
    select * from {{ ref('fct_distribution_date') }}
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

pool as (
    select * from {{ ref('fct_pool_period') }}
),

period_inputs as (
    select * from {{ ref('int_waterfall__period_inputs') }}
),

earnings as (
    select * from {{ ref('stg_trustee__account_earnings') }}
),

floating_classes as (
    -- the classes with a balance at the Distribution Date whose Note Rate is the index plus a
    -- spread (Art. I "Note Rate"): the date needs its index rate
    select
        notes.deal_id,
        notes.distribution_date,
        count(*) as floating_class_count
    from notes
    inner join classes on notes.deal_id = classes.deal_id and notes.class_id = classes.class_id
    where classes.rate_type = 'floating' and notes.beginning_balance > 0
    group by notes.deal_id, notes.distribution_date
),

missing_inputs as (
    -- 1122(d)(3)(ii): what the waterfall pays rests on the market inputs of the date: the index
    -- rate of a floating class (index_rates.csv) and the trust accounts' earnings
    -- (trust_account_earnings.csv); a date without them is not computed as the agreement says
    select
        period_inputs.deal_id,
        period_inputs.collection_period,
        case
            when coalesce(floating_classes.floating_class_count, 0) > 0 and period_inputs.index_rate is null
                then 1
            else 0
        end
        + case when earnings.distribution_date is null then 1 else 0 end as missing_market_input_count
    from period_inputs
    left join floating_classes
        on
            period_inputs.deal_id = floating_classes.deal_id
            and period_inputs.distribution_date = floating_classes.distribution_date
    left join earnings
        on period_inputs.deal_id = earnings.deal_id and period_inputs.distribution_date = earnings.distribution_date
),

balance_mismatches as (
    -- 1122(d)(4)(v): the servicer's Principal Balances agree with the Simple Interest Method
    select
        deal_id,
        collection_period,
        count(distinct receivable_id) as balance_mismatch_count
    from reconciliation
    group by deal_id, collection_period
),

repurchase_exceptions as (
    -- 2.4 (1122(d)(4)(iii)): breaches are repurchased when and for the amount the agreement says
    select
        deal_id,
        collection_period,
        count(*) filter (where not is_as_agreed) as repurchase_exception_count
    from repurchases
    group by deal_id, collection_period
),

funds_applied as (
    select
        deal_id,
        period_number,
        sum(amount_paid) filter (where funded_from = 'available_funds') as paid_from_available_funds
    from waterfall_steps
    group by deal_id, period_number
),

waterfall_measures as (
    -- 1122(d)(3)(ii): amounts due to investors allocated in the priority of payments
    select
        dates.deal_id,
        dates.period_number,
        -- Available Funds (Available Collections plus the Reserve Account Draw Amount) are exactly
        -- what the priority of payments pays plus the Excess Collections
        dates.available_funds_amount - funds_applied.paid_from_available_funds as sources_minus_uses_amount,
        dates.available_collections_amount + dates.reserve_account_draw_amount
        - dates.available_funds_amount as available_funds_difference_amount,
        -- the Reserve Account rolls forward from its beginning to its ending balance (4.7)
        dates.reserve_account_beginning_balance + dates.reserve_account_investment_earnings
        - dates.reserve_account_draw_amount + dates.reserve_account_deposit_amount
        - dates.reserve_released_to_principal_amount - dates.reserve_released_to_successor_servicer_amount
        - dates.reserve_released_to_certificateholder_amount
        - dates.reserve_account_ending_balance as reserve_roll_forward_difference_amount
    from dates
    inner join funds_applied on dates.deal_id = funds_applied.deal_id and dates.period_number = funds_applied.period_number
),

seniority as (
    -- Indenture 2.8(d): no class is paid principal while a class ahead of it in the principal
    -- order still has a balance after the distribution
    select
        junior.deal_id,
        junior.period_number,
        count(*) as seniority_violation_count
    from notes as junior
    inner join classes as junior_class
        on junior.deal_id = junior_class.deal_id and junior.class_id = junior_class.class_id
    inner join notes as senior
        on junior.deal_id = senior.deal_id and junior.period_number = senior.period_number
    inner join classes as senior_class
        on
            senior.deal_id = senior_class.deal_id
            and senior.class_id = senior_class.class_id
            and junior_class.principal_order > senior_class.principal_order
    where junior.principal_paid_amount > 0 and senior.ending_balance > 0
    group by junior.deal_id, junior.period_number
),

advance_exceptions as (
    -- 1122(d)(2)(iii): advances made as 4.4(a) allows (none on a Defaulted Receivable, none above
    -- the interest scheduled and not received)
    select
        deal_id,
        collection_period,
        count(*) as advance_exception_count
    from {{ ref('int_receivable_period__simple_interest_advances') }}
    where is_advance_over_limit
    group by deal_id, collection_period
),

final as (
    select
        -- ids
        calendar.deal_id,
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
        -- 1122(d)(1)(v): the Pool Balance rolls forward (Exhibit A line 5 = 1 - 2 - 3 - 4); a
        -- receivable that leaves the tapes with a balance the recomputation still carries (a
        -- payment missing from the transactions) breaks it
        pool.ending_pool_balance - pool.rolled_forward_pool_balance as pool_roll_forward_difference_amount,
        period_totals.charge_off_mismatch_count,
        period_totals.extension_beyond_final_date_count,
        coalesce(repurchase_exceptions.repurchase_exception_count, 0) as repurchase_exception_count,
        waterfall_measures.sources_minus_uses_amount,
        waterfall_measures.available_funds_difference_amount,
        waterfall_measures.reserve_roll_forward_difference_amount,
        coalesce(seniority.seniority_violation_count, 0) as seniority_violation_count,
        coalesce(advance_exceptions.advance_exception_count, 0) as advance_exception_count,
        missing_inputs.missing_market_input_count
    from period_totals
    inner join calendar
        on period_totals.deal_id = calendar.deal_id and period_totals.collection_period = calendar.collection_period
    left join pool
        on period_totals.deal_id = pool.deal_id and period_totals.collection_period = pool.collection_period
    left join missing_inputs
        on
            period_totals.deal_id = missing_inputs.deal_id
            and period_totals.collection_period = missing_inputs.collection_period
    left join balance_mismatches
        on
            period_totals.deal_id = balance_mismatches.deal_id
            and period_totals.collection_period = balance_mismatches.collection_period
    left join repurchase_exceptions
        on
            period_totals.deal_id = repurchase_exceptions.deal_id
            and period_totals.collection_period = repurchase_exceptions.collection_period
    left join waterfall_measures
        on calendar.deal_id = waterfall_measures.deal_id and calendar.period_number = waterfall_measures.period_number
    left join seniority
        on calendar.deal_id = seniority.deal_id and calendar.period_number = seniority.period_number
    left join advance_exceptions
        on
            period_totals.deal_id = advance_exceptions.deal_id
            and period_totals.collection_period = advance_exceptions.collection_period
)

select * from final
