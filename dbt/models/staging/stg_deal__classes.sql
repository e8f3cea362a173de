with

source as (
    select * from {{ source('raw', 'deal_classes') }}
),

renamed as (
    select
        -- ids
        class_id,
        label as class_label,
        -- attributes
        class_order,
        tier as class_tier,
        principal_order,
        rate_type,
        day_count,
        -- amounts and rates
        initial_balance::decimal(18, 2) as initial_balance,
        rate::decimal(12, 9) as fixed_rate,
        spread::decimal(12, 9) as floating_spread,
        first_period_interest::decimal(18, 2) as first_period_interest_amount,
        -- dates
        final_distribution_date
    from source
)

select * from renamed
