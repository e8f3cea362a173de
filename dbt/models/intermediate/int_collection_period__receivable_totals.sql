-- One row per Collection Period on the tapes: the sums and counts over its receivable-periods
-- that the pool roll-forward (fct_pool_period) and the servicing criteria (rpt_servicing_criteria)
-- read, so that those two never scan the loan-level rows themselves.
-- Incremental (macros/incremental.sql): a build from Collection Period P recomputes the rows of P
-- and later; each receivable's last receivable-period before P gives what P compares with.
{{ loan_level_incremental_config() }}

with

rebuilt as (
    select * from {{ ref('fct_receivable_period') }}
    where collection_period >= {{ rebuild_from() }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

terms as (
    select * from {{ ref('stg_deal__terms') }}
),

final_maturity as (
    -- Art. I "Final Scheduled Maturity Date"
    select term_value::date as final_scheduled_maturity_date
    from terms
    where term_name = 'final_scheduled_maturity_date'
),

earlier as (
    -- each rebuilt receivable's last receivable-period before the rebuild (none in a full build)
    select
        receivable_id,
        max(period_number) as period_number,
        arg_max(reported_ending_balance, period_number) as reported_ending_balance,
        arg_max(is_outstanding, period_number) as is_outstanding,
        true as is_earlier
    from {{ ref('fct_receivable_period') }}
    where
        collection_period < {{ rebuild_from() }}
        and receivable_id in (select receivable_id from rebuilt)
    group by receivable_id
),

receivable_history as (
    select
        *,
        lag(reported_ending_balance) over receivable_order as previous_reported_ending_balance,
        lead(period_number) over receivable_order as next_period_number
    from (
        select
            *,
            false as is_earlier
        from rebuilt
        union all by name
        select * from earlier
    ) as periods
    window receivable_order as (partition by receivable_id order by period_number)
),

pool_totals as (
    -- the pool roll-forward (Exhibit A lines 1-7), collections (lines 17-22), losses (lines
    -- 75-77), delinquency (line 78) and the weighted averages (lines 12-14) of fct_pool_period
    select
        periods.collection_period,
        sum(periods.principal_collected_amount + periods.rebate_principal_amount)
            as principal_collections_amount,
        sum(periods.interest_collected_amount) as finance_charge_collections_amount,
        sum(periods.purchase_principal_amount) as purchase_principal_amount,
        sum(periods.purchase_interest_amount) as purchase_finance_charge_amount,
        sum(periods.defaulted_principal_amount) as defaulted_receivables_amount,
        sum(periods.liquidation_principal_amount) as liquidation_principal_amount,
        sum(periods.liquidation_interest_amount) as liquidation_finance_charge_amount,
        sum(periods.liquidation_proceeds_amount) as liquidation_proceeds_amount,
        sum(periods.fees_collected_amount) as supplemental_servicing_fees_amount,
        sum(periods.simple_interest_advance_amount) as simple_interest_advances_amount,
        sum(periods.ending_balance) as ending_pool_balance,
        count(*) filter (where periods.is_outstanding) as receivables_outstanding,
        count(*) filter (where periods.is_default_period) as receivables_defaulted,
        count(*) filter (where periods.is_purchase_period) as receivables_purchased,
        -- weighted by the ending Principal Balance, in integer cents (exact)
        sum({{ to_cents('periods.ending_balance') }} * (schedule.apr * 1000000)::bigint)
            as apr_weighted_cents,
        sum({{ to_cents('periods.ending_balance') }} * schedule.original_term_months)
            as original_term_weighted_cents,
        sum(
            {{ to_cents('periods.ending_balance') }}
            * greatest(datediff('month', calendar.collection_period_end_date, periods.maturity_date), 0)
        ) as remaining_term_weighted_cents,
        {% for bucket in ['31-60', '61-90', '91+'] %}
            count(*) filter (where periods.delinquency_bucket = '{{ bucket }}')
                as delinquent_{{ bucket | replace('-', '_') | replace('+', '_plus') }}_count,
            coalesce(sum(periods.ending_balance) filter (where periods.delinquency_bucket = '{{ bucket }}'), 0)
                as delinquent_{{ bucket | replace('-', '_') | replace('+', '_plus') }}_balance,
        {% endfor %}
        count(*) filter (where periods.delinquency_bucket = 'current') as current_count,
        coalesce(sum(periods.ending_balance) filter (where periods.delinquency_bucket = 'current'), 0)
            as current_balance,
        count(*) filter (where periods.delinquency_bucket = '1-30') as delinquent_1_30_count,
        coalesce(sum(periods.ending_balance) filter (where periods.delinquency_bucket = '1-30'), 0)
            as delinquent_1_30_balance
    from rebuilt as periods
    inner join schedule on periods.receivable_id = schedule.receivable_id
    inner join calendar on periods.collection_period = calendar.collection_period
    group by periods.collection_period
),

tape_measures as (
    -- the servicing criteria (Regulation AB Item 1122(d), Exhibit D) of rpt_servicing_criteria
    select
        collection_period,
        count(*) as receivable_periods_tested,
        count(*) filter (where not is_independently_recomputed) as not_recomputed_count,
        -- 1122(d)(1)(v): the servicer's figures aggregate accurately: each receivable's ending
        -- balance is its beginning balance less principal, rebates and charge-off (zero once
        -- purchased), and it begins where the previous period ended
        count(*) filter (
            where reported_ending_balance <> case
                when reported_status = 'purchased' then 0
                else
                    reported_beginning_balance - reported_principal_collected_amount
                    - reported_rebate_amount - reported_charged_off_principal_amount
            end
        ) as servicer_roll_forward_break_count,
        count(*) filter (
            where reported_beginning_balance <> previous_reported_ending_balance
        ) as servicer_continuity_break_count,
        -- 1122(d)(4)(xiv): charge-offs recorded as Art. I "Defaulted Receivable" requires (120+
        -- days, repossessed and sold, or uncollectible; the Principal Balance at that period end)
        count(*) filter (
            where reported_charged_off_principal_amount <> defaulted_principal_amount
        ) as charge_off_mismatch_count,
        -- 3.2 (1122(d)(4)(vi)): extensions never carry a receivable past the Final Scheduled
        -- Maturity Date
        count(*) filter (
            where maturity_date > (select final_scheduled_maturity_date from final_maturity)
        ) as extension_beyond_final_date_count
    from receivable_history
    where not is_earlier
    group by collection_period
),

missing_receivables as (
    -- a receivable outstanding at a period end must be on the next period's tape
    select
        calendar.collection_period,
        count(*) as missing_receivable_count
    from receivable_history
    inner join calendar on calendar.period_number = receivable_history.period_number + 1
    where
        receivable_history.is_outstanding
        and calendar.collection_period >= {{ rebuild_from() }}
        and receivable_history.period_number + 1
        <= (select max(period_number) from {{ ref('fct_receivable_period') }})
        and receivable_history.next_period_number is distinct from receivable_history.period_number + 1
    group by calendar.collection_period
),

final as (
    select
        calendar.collection_period,
        calendar.period_number,
        pool_totals.* exclude (pool_totals.collection_period),
        tape_measures.* exclude (tape_measures.collection_period),
        coalesce(missing_receivables.missing_receivable_count, 0) as missing_receivable_count
    from pool_totals
    inner join calendar on pool_totals.collection_period = calendar.collection_period
    inner join tape_measures on pool_totals.collection_period = tape_measures.collection_period
    left join missing_receivables on pool_totals.collection_period = missing_receivables.collection_period
)

select * from final
