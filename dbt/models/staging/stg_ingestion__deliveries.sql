-- The delivery ledger: every delivered file of every trust, loaded, superseded by a restatement,
-- or rejected (with its first finding; the rows are in raw.quarantine).
with

source as (
    select * from {{ source('raw', 'deliveries') }}
),

renamed as (
    select
        -- ids
        delivery_id,
        deal_id,
        -- attributes
        file_kind,
        scope as delivery_scope,
        file_path,
        sha256 as file_sha256,
        status as delivery_status,
        first_finding,
        -- counts
        row_count,
        finding_count,
        -- timestamps
        loaded_at as received_at,
        superseded_at
    from source
)

select * from renamed
