-- One row per Collection Period on the tapes: the sums and counts over its receivable-periods
-- that the pool roll-forward (fct_pool_period) and the servicing criteria (rpt_servicing_criteria)
-- read, so that those two never scan the loan-level rows themselves.
-- Incremental (macros/incremental.sql): a build of a trust from Collection Period P recomputes its
-- rows of P and later; each receivable's last receivable-period before P gives what P compares
-- with.
{{ loan_level_incremental_config() }}

with

rebuilt as {{ not_materialized_cte() }} (
    -- read at each reference (the totals and the history below): held whole, the shelf's
    -- receivable-periods would be in memory
    select * from {{ ref('fct_receivable_period') }}
    where {{ is_rebuilt() }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

{% if is_incremental() %}
earlier as (
    -- each rebuilt receivable's last receivable-period before the rebuild (none in a full build),
    -- and every receivable on the tape just before the window: one outstanding there and on none
    -- of the window's tapes is missing from the window's first period (history_measures
    -- below); the period before is the calendar month before (periods named YYYY-MM, as the
    -- calendar names them; period_before_window)
    select
        kept.deal_id,
        kept.receivable_id,
        kept.last_kept.period_number,
        kept.last_kept.reported_ending_balance,
        kept.last_kept.is_outstanding,
        true as is_earlier
    from (
        {{ last_kept_rows({
            'period_number': 'period_number',
            'reported_ending_balance': 'reported_ending_balance',
            'is_outstanding': 'is_outstanding'
        }, 'period_number', among='rebuilt', relation=ref('fct_receivable_period'), and_whole_period_before=true) }}
    ) as kept
),
{% endif %}

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
        {%- if is_incremental() %}
            -- incremental builds run on DuckDB only (macros/incremental.sql)
            union all by name
            select * from earlier
        {%- endif %}
    ) as periods
    window receivable_order as (partition by deal_id, receivable_id order by period_number)
),

pool_totals as (
    -- the pool roll-forward (Exhibit A lines 1-7), collections (lines 17-22), losses (lines
    -- 75-77), delinquency (line 78) and the weighted averages (lines 12-14) of fct_pool_period
    select
        periods.deal_id,
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
        sum(periods.ending_balance) as ending_pool_balance,
        count(*) filter (where periods.is_outstanding) as receivables_outstanding,
        count(*) filter (where periods.is_default_period) as receivables_defaulted,
        count(*) filter (where periods.is_purchase_period) as receivables_purchased,
        -- weighted by the ending Principal Balance, in integer cents (exact)
        sum({{ to_cents('periods.ending_balance') }} * {{ apr_e6('schedule.apr') }})
            as apr_weighted_cents,
        sum({{ to_cents('periods.ending_balance') }} * schedule.original_term_months)
            as original_term_weighted_cents,
        sum(
            {{ to_cents('periods.ending_balance') }}
            * {{ remaining_term_months('calendar.collection_period_end_date', 'periods.maturity_date') }}
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
    inner join schedule
        on periods.deal_id = schedule.deal_id and periods.receivable_id = schedule.receivable_id
    inner join calendar
        on periods.deal_id = calendar.deal_id and periods.collection_period = calendar.collection_period
    group by periods.deal_id, periods.collection_period
),

history_measures as (
    -- One pass over the receivable histories (a CTE read twice is held in memory whole), by
    -- period number: the servicing criteria (Regulation AB Item 1122(d), Exhibit D) of
    -- rpt_servicing_criteria over the periods rebuilt, and the receivables outstanding at each
    -- period end that are on no tape of the next period (the window's first period: the kept
    -- rows before it count too)
    select
        history.deal_id,
        history.period_number,
        count(*) filter (where not history.is_earlier) as receivable_periods_tested,
        count(*) filter (where not history.is_earlier and not history.is_independently_recomputed)
            as not_recomputed_count,
        -- 1122(d)(1)(v): the servicer's figures aggregate accurately: each receivable's ending
        -- balance is its beginning balance less principal, rebates and charge-off (zero once
        -- purchased), and it begins where the previous period ended
        count(*) filter (
            where not history.is_earlier and history.reported_ending_balance <> case
                when history.reported_status = 'purchased' then 0
                -- after its charge-off a Defaulted Receivable has no balance: what it pays is
                -- Liquidation Proceeds (Art. I), however the servicer books it
                when
                    history.reported_status in ('charged_off', 'liquidated')
                    and history.reported_beginning_balance = 0
                    then 0
                else
                    history.reported_beginning_balance
                    - history.reported_principal_collected_amount
                    - history.reported_rebate_amount
                    - history.reported_charged_off_principal_amount
            end
        ) as servicer_roll_forward_break_count,
        count(*) filter (
            where
            not history.is_earlier
            and history.reported_beginning_balance <> history.previous_reported_ending_balance
        ) as servicer_continuity_break_count,
        -- 1122(d)(4)(xiv): charge-offs recorded as Art. I "Defaulted Receivable" requires (120+
        -- days, repossessed and sold, or uncollectible; the Principal Balance at that period end)
        count(*) filter (
            where
            not history.is_earlier
            and history.reported_charged_off_principal_amount <> history.defaulted_principal_amount
        ) as charge_off_mismatch_count,
        -- 3.2 (1122(d)(4)(vi)): extensions never carry a receivable past the Final Scheduled
        -- Maturity Date
        count(*) filter (
            where not history.is_earlier and history.maturity_date > deals.final_scheduled_maturity_date
        ) as extension_beyond_final_date_count,
        -- a receivable outstanding at a period end must be on the next period's tape (each period
        -- computed: its tape and every earlier one loaded)
        count(*) filter (
            where
            history.is_outstanding
            and history.next_period_number is distinct from history.period_number + 1
        ) as missing_from_next_tape_count
    from receivable_history as history
    inner join deals on history.deal_id = deals.deal_id
    group by history.deal_id, history.period_number
),

computed_periods as (
    -- every Collection Period computed in this build, even one whose tape has no row (no
    -- receivable outstanding any more: its totals are zero)
    select
        tape_status.deal_id,
        tape_status.collection_period,
        tape_status.period_number
    from {{ ref('int_collection_period__tape_status') }} as tape_status
    where tape_status.is_computable and {{ is_rebuilt('tape_status.deal_id', 'tape_status.collection_period') }}
),

{%- set pool_columns = [
    'principal_collections_amount', 'finance_charge_collections_amount', 'purchase_principal_amount',
    'purchase_finance_charge_amount', 'defaulted_receivables_amount', 'liquidation_principal_amount',
    'liquidation_finance_charge_amount', 'liquidation_proceeds_amount', 'supplemental_servicing_fees_amount',
    'ending_pool_balance', 'receivables_outstanding', 'receivables_defaulted',
    'receivables_purchased', 'apr_weighted_cents', 'original_term_weighted_cents', 'remaining_term_weighted_cents',
    'delinquent_31_60_count', 'delinquent_31_60_balance', 'delinquent_61_90_count', 'delinquent_61_90_balance',
    'delinquent_91_plus_count', 'delinquent_91_plus_balance', 'current_count', 'current_balance',
    'delinquent_1_30_count', 'delinquent_1_30_balance'
] %}
{%- set tape_columns = [
    'receivable_periods_tested', 'not_recomputed_count', 'servicer_roll_forward_break_count',
    'servicer_continuity_break_count', 'charge_off_mismatch_count', 'extension_beyond_final_date_count'
] %}

final as (
    select
        computed_periods.deal_id,
        computed_periods.collection_period,
        computed_periods.period_number,
        {% for column in pool_columns %}
            coalesce(pool_totals.{{ column }}, 0) as {{ column }},
        {% endfor %}
        {% for column in tape_columns %}
            coalesce(tape_measures.{{ column }}, 0) as {{ column }},
        {% endfor %}
        coalesce(period_before.missing_from_next_tape_count, 0) as missing_receivable_count
    from computed_periods
    left join pool_totals
        on
            computed_periods.deal_id = pool_totals.deal_id
            and computed_periods.collection_period = pool_totals.collection_period
    left join history_measures as tape_measures
        on
            computed_periods.deal_id = tape_measures.deal_id
            and computed_periods.period_number = tape_measures.period_number
    left join history_measures as period_before
        on
            computed_periods.deal_id = period_before.deal_id
            and computed_periods.period_number = period_before.period_number + 1
)

select * from final
