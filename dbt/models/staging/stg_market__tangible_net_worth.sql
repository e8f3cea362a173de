with

source as (
    select * from {{ source('raw', 'tangible_net_worth') }}
),

renamed as (
    select
        fiscal_quarter_end as fiscal_quarter_end_date,
        consolidated_tangible_net_worth::decimal(18, 2) as tangible_net_worth_amount
    from source
)

select * from renamed
