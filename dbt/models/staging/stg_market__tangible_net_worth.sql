with

source as (
    select * from {{ source('raw', 'tangible_net_worth') }}
),

renamed as (
    select
        -- amounts
        consolidated_tangible_net_worth as tangible_net_worth_amount,
        -- dates
        fiscal_quarter_end as fiscal_quarter_end_date
    from source
)

select * from renamed
