with

source as (
    select * from {{ source('raw', 'payment_transactions') }}
),

renamed as (
    select
        -- ids
        deal_id,
        assetNumber as receivable_id,
        collection_period,
        delivery_id,
        -- attributes
        transactionType as transaction_type,
        -- amounts
        transactionAmount as transaction_amount,
        -- dates
        transactionDate as transaction_date
    from source
)

select * from renamed
