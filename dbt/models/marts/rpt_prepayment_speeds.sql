-- Prepayment per trust and Collection Period, as auto ABS investors read it: scheduled and
-- prepaid principal (int_collection_period__prepayments says how each is measured), the single
-- month mortality, CPR and ABS speed of the period, and cumulatively the prepaid principal to date
-- as a share of the Initial Pool Balance. Exact to ten decimals (percent_of).
{{ config(materialized=view_materialization()) }}

with

speeds as (
    select * from {{ ref('int_collection_period__prepayments') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

joined as (
    select
        speeds.*,
        calendar.period_number,
        calendar.distribution_date,
        deals.initial_pool_balance,
        sum({{ to_cents('speeds.prepaid_principal_amount') }}) over (
            partition by speeds.deal_id order by calendar.period_number
            rows between unbounded preceding and current row
        ) as cumulative_prepaid_cents
    from speeds
    inner join calendar
        on speeds.deal_id = calendar.deal_id and speeds.collection_period = calendar.collection_period
    inner join deals on speeds.deal_id = deals.deal_id
)

select
    deal_id,
    collection_period,
    period_number,
    distribution_date,
    scheduled_principal_amount,
    prepaid_principal_amount,
    single_month_mortality_percent,
    conditional_prepayment_rate_percent,
    abs_speed_percent,
    pool_age_months,
    {{ from_cents('cumulative_prepaid_cents') }} as cumulative_prepaid_principal_amount,
    {{ percent_of('cumulative_prepaid_cents', to_cents('initial_pool_balance')) }}
        as cumulative_prepaid_percent_of_initial_pool
from joined
