with

source as (
    select * from {{ source('raw', 'certificate_layout') }}
),

renamed as (
    select
        -- ids
        deal_id,
        line,
        key as line_key,
        -- attributes
        label as line_label,
        kind as line_kind,
        line_order,
        section as certificate_section,
        group_label,
        nullif(payment_step, '') as payment_step
    from source
)

select * from renamed
