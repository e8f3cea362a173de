with

source as (
    select * from {{ source('quality', 'eligibility_exceptions') }}
),

renamed as (
    select
        -- ids
        deal_id,
        receivable_id,
        representation,
        -- attributes
        suite_name,
        expectation_name,
        rule_text,
        observed_value,
        schedule_delivery_id,
        -- dates
        discovered_date,
        validated_at
    from source
)

select * from renamed
