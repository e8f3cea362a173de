with

source as (
    select * from {{ source('raw', 'payment_calendar') }}
),

renamed as (
    select
        -- ids
        deal_id,
        period_number,
        collection_period,
        -- dates
        collection_period_start as collection_period_start_date,
        collection_period_end as collection_period_end_date,
        determination_date,
        distribution_date,
        record_date,
        accrual_start as accrual_start_date,
        thirty_360_start as thirty_360_start_date,
        related_fiscal_quarter_end as related_fiscal_quarter_end_date,
        -- attributes
        actual_days as actual_accrual_days,
        thirty_360_days as thirty_360_accrual_days
    from source
)

select * from renamed
