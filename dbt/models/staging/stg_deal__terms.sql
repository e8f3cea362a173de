with

source as (
    select * from {{ source('raw', 'deal_terms') }}
),

renamed as (
    select
        term as term_name,
        value as term_value,
        section as agreement_section
    from source
)

select * from renamed
