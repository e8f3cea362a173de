with

source as (
    select * from {{ source('raw', 'trust_account_earnings') }}
),

renamed as (
    select
        distribution_date,
        collection_account_interest::decimal(18, 2) as collection_account_interest_amount,
        reserve_account_investment_earnings::decimal(18, 2) as reserve_investment_earnings_amount
    from source
)

select * from renamed
