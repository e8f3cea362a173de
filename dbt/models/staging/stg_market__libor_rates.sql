with

source as (
    select * from {{ source('raw', 'libor_rates') }}
),

renamed as (
    select
        accrual_period_start as accrual_start_date,
        accrual_period_end as accrual_end_date,
        distribution_date,
        libor::decimal(12, 9) as libor_rate
    from source
)

select * from renamed
