with

source as (
    select * from {{ source('raw', 'deal_classes') }}
),

renamed as (
    select
        -- ids
        deal_id,
        class_id,
        -- attributes
        label as class_label,
        class_order,
        tier as class_tier,
        principal_order,
        rate_type,
        day_count,
        -- amounts and rates
        initial_balance,
        rate as fixed_rate,
        spread as floating_spread,
        first_period_interest as first_period_interest_amount,
        -- dates
        final_distribution_date
    from source
)

select * from renamed
