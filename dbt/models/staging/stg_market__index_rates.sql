with

source as (
    select * from {{ source('raw', 'index_rates') }}
),

renamed as (
    select
        -- ids
        deal_id,
        -- rates
        index_rate,
        -- dates
        accrual_period_start as accrual_start_date,
        accrual_period_end as accrual_end_date,
        distribution_date
    from source
)

select * from renamed
