with

source as (
    select * from {{ source('raw', 'trust_account_earnings') }}
),

renamed as (
    select
        -- ids
        deal_id,
        -- amounts
        collection_account_interest as collection_account_interest_amount,
        reserve_account_investment_earnings as reserve_investment_earnings_amount,
        -- dates
        distribution_date
    from source
)

select * from renamed
