-- Loss and delinquency curves by origination quarter: for each trust, the receivables of the
-- cutoff pool grouped by the quarter they were originated in, and for each Collection Period
-- (keyed by months since the Cutoff Date, as rpt_shelf_performance_by_age) their cumulative
-- gross loss (defaulted principal, Art. I "Defaulted Receivable") and cumulative net loss
-- (less Liquidation Proceeds, Art. I "Net Losses") as shares of the cohort's cutoff balance, and
-- the 61+ days delinquent share of its balance outstanding. Exact to ten decimals (percent_of).
-- Incremental (macros/incremental.sql): a build recomputes the trusts' periods of its window,
-- each cohort's amounts to date continuing from its last row kept from earlier builds.
{{ loan_level_incremental_config() }}
{{ config(pre_hook="{{ delete_window_rows() }}") }}

with

receivables as (
    select * from {{ ref('dim_receivable') }}
),

periods as (
    select * from {{ ref('fct_receivable_period') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

cohorts as (
    select
        deal_id,
        receivable_id,
        origination_quarter,
        {{ to_cents('cutoff_principal_balance') }} as cutoff_cents
    from receivables
),

cohort_sizes as (
    select
        deal_id,
        origination_quarter,
        count(*) as receivable_count,
        sum(cutoff_cents) as cutoff_cents
    from cohorts
    group by deal_id, origination_quarter
),

per_period as (
    select
        periods.deal_id,
        cohorts.origination_quarter,
        periods.period_number,
        periods.collection_period,
        sum({{ to_cents('periods.defaulted_principal_amount') }}) as defaulted_cents,
        sum({{ to_cents('periods.liquidation_proceeds_amount') }}) as proceeds_cents,
        sum({{ to_cents('periods.ending_balance') }}) as ending_cents,
        coalesce(sum({{ to_cents('periods.ending_balance') }}) filter (where periods.days_past_due > 60), 0)
            as delinquent_61_plus_cents
    from periods
    inner join cohorts
        on periods.deal_id = cohorts.deal_id and periods.receivable_id = cohorts.receivable_id
    where {{ is_rebuilt('periods.deal_id', 'periods.collection_period') }}
    group by periods.deal_id, cohorts.origination_quarter, periods.period_number, periods.collection_period
),

{% if is_incremental() %}
carried as (
    -- each cohort's amounts to date before its trust's window: its last row kept from earlier
    -- builds (a cohort without receivables in a period has no row for it)
    select
        kept.deal_id,
        kept.origination_quarter,
        max_by({{ to_cents('kept.cumulative_defaulted_principal') }}, kept.period_number) as defaulted_cents,
        max_by({{ to_cents('kept.cumulative_liquidation_proceeds') }}, kept.period_number) as proceeds_cents
    from {{ this }} as kept
    inner join {{ window_starts() }} on kept.deal_id = window_starts.deal_id
    where kept.collection_period < window_starts.first_period
    group by kept.deal_id, kept.origination_quarter
),
{% endif %}

cumulative as (
    select
        per_period.*,
        {% if is_incremental() %}coalesce(carried.defaulted_cents, 0) + {% endif -%}
        sum(per_period.defaulted_cents) over cohort_to_date as cumulative_defaulted_cents,
        {% if is_incremental() %}coalesce(carried.proceeds_cents, 0) + {% endif -%}
        sum(per_period.proceeds_cents) over cohort_to_date as cumulative_proceeds_cents
    from per_period
    {%- if is_incremental() %}
        left join carried
            on per_period.deal_id = carried.deal_id and per_period.origination_quarter = carried.origination_quarter
    {%- endif %}
    window cohort_to_date as (
        partition by per_period.deal_id, per_period.origination_quarter order by per_period.period_number
        rows between unbounded preceding and current row
    )
)

select
    cumulative.deal_id,
    cumulative.origination_quarter,
    cumulative.period_number,
    cumulative.collection_period,
    {{ months_since_cutoff('calendar.collection_period_start_date', 'deals.cutoff_date') }}
        as months_since_cutoff,
    cohort_sizes.receivable_count as cohort_receivable_count,
    {{ from_cents('cohort_sizes.cutoff_cents') }} as cohort_cutoff_balance,
    {{ from_cents('cumulative.ending_cents') }} as cohort_ending_balance,
    {{ from_cents('cumulative.cumulative_defaulted_cents') }} as cumulative_defaulted_principal,
    {{ from_cents('cumulative.cumulative_proceeds_cents') }} as cumulative_liquidation_proceeds,
    {{ percent_of('cumulative.cumulative_defaulted_cents', 'cohort_sizes.cutoff_cents') }}
        as cumulative_gross_loss_percent,
    -- Net Losses are "the excess, if any" (Art. I): never below zero
    {{ percent_of('greatest(cumulative.cumulative_defaulted_cents - cumulative.cumulative_proceeds_cents, 0)', 'cohort_sizes.cutoff_cents') }}
        as cumulative_net_loss_percent,
    {{ percent_of('cumulative.delinquent_61_plus_cents', 'cumulative.ending_cents') }}
        as delinquent_61_plus_percent
from cumulative
inner join cohort_sizes
    on cumulative.deal_id = cohort_sizes.deal_id and cumulative.origination_quarter = cohort_sizes.origination_quarter
inner join calendar
    on cumulative.deal_id = calendar.deal_id and cumulative.collection_period = calendar.collection_period
inner join deals on cumulative.deal_id = deals.deal_id
