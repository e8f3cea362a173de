-- Pool stratifications, as an offering document prints them: for each trust at the cutoff
-- (period_number 0, the Receivable Schedule) and at the end of every Collection Period (the
-- receivables outstanding), by credit score band, APR band, original term, remaining term,
-- new or used vehicle, vehicle model year and obligor state: the count, the Principal Balance,
-- its share of the pool, the weighted average APR (percent) and remaining term (months). Shares
-- and averages are exact (integer cents, half up at ten decimals, money.sql's percent_of).
-- Incremental (macros/incremental.sql): a period's strata need only its own receivable-periods,
-- so a build recomputes the trusts' periods of its window and their cutoff, and keeps the others.
{{ loan_level_incremental_config() }}
{{ config(pre_hook="{{ delete_window_rows() }}") }}

{%- set dimensions = {
    'credit score': "case when obligor_credit_score is null then 'none'
        when obligor_credit_score < 600 then 'below 600'
        when obligor_credit_score < 650 then '600-649'
        when obligor_credit_score < 700 then '650-699'
        when obligor_credit_score < 750 then '700-749'
        when obligor_credit_score < 800 then '750-799'
        else '800 and above' end",
    'APR': "case when apr < 0.04 then 'below 4%' when apr < 0.08 then '4% to below 8%'
        when apr < 0.12 then '8% to below 12%' when apr < 0.16 then '12% to below 16%'
        when apr < 0.20 then '16% to below 20%' else '20% and above' end",
    'original term': "case when original_term_months <= 36 then 'up to 36 months'
        when original_term_months <= 48 then '37-48 months' when original_term_months <= 60 then '49-60 months'
        when original_term_months <= 66 then '61-66 months' when original_term_months <= 72 then '67-72 months'
        else 'over 72 months' end",
    'remaining term': "case when remaining_term_months <= 12 then 'up to 12 months'
        when remaining_term_months <= 24 then '13-24 months' when remaining_term_months <= 36 then '25-36 months'
        when remaining_term_months <= 48 then '37-48 months' when remaining_term_months <= 60 then '49-60 months'
        else 'over 60 months' end",
    'vehicle': 'vehicle_new_used',
    'model year': 'vehicle_model_year::string',
    'state': 'obligor_state'
} %}

with

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

periods as (
    select * from {{ ref('fct_receivable_period') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

pool_rows as (
    -- the cutoff pool
    select
        deal_id,
        0 as period_number,
        'cutoff' as collection_period,
        apr,
        obligor_credit_score,
        original_term_months,
        remaining_term_months,
        vehicle_new_used,
        vehicle_model_year,
        obligor_state,
        {{ to_cents('cutoff_principal_balance') }} as balance_cents
    from schedule
    where {{ is_rebuilt('deal_id', "'cutoff'") }}
    union all
    -- the receivables outstanding at the end of each Collection Period
    select
        periods.deal_id,
        periods.period_number,
        periods.collection_period,
        schedule.apr,
        schedule.obligor_credit_score,
        schedule.original_term_months,
        {{ remaining_term_months('calendar.collection_period_end_date', 'periods.maturity_date') }}
            as remaining_term_months,
        schedule.vehicle_new_used,
        schedule.vehicle_model_year,
        schedule.obligor_state,
        {{ to_cents('periods.ending_balance') }} as balance_cents
    from periods
    inner join schedule
        on periods.deal_id = schedule.deal_id and periods.receivable_id = schedule.receivable_id
    inner join calendar
        on periods.deal_id = calendar.deal_id and periods.collection_period = calendar.collection_period
    where periods.is_outstanding and {{ is_rebuilt('periods.deal_id', 'periods.collection_period') }}
),

strata as (
    {%- for name, bucket in dimensions.items() %}
        {% if not loop.first %}union all{% endif %}
        select
            deal_id,
            period_number,
            collection_period,
            '{{ name }}' as dimension,
            coalesce(({{ bucket }}), 'not reported') as bucket,
            count(*) as receivable_count,
            sum(balance_cents) as balance_cents,
            sum(balance_cents * {{ apr_e6('apr') }}) as apr_weighted_cents,
            sum(balance_cents * remaining_term_months) as remaining_term_weighted_cents
        from pool_rows
        group by all
    {%- endfor %}
)

select
    deal_id,
    period_number,
    collection_period,
    dimension,
    bucket,
    receivable_count,
    {{ from_cents('balance_cents') }} as principal_balance,
    {{ percent_of('balance_cents', 'sum(balance_cents) over (partition by deal_id, period_number, dimension)') }}
        as balance_share_percent,
    -- APR in millionths x cents over cents: a percent with ten decimals
    {{ percent_of('apr_weighted_cents', 'balance_cents * 1000000') }} as weighted_average_apr_percent,
    {{ scaled(div_half_up(widened('remaining_term_weighted_cents') ~ ' * 10000000000', 'greatest(balance_cents, 1)'), 10) }}::decimal(24, 10)
        as weighted_average_remaining_term_months
from strata
