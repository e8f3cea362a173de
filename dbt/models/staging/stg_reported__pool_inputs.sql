-- Reconciliation mode only (var pool_inputs = reported): the pool figures a published certificate
-- reports, loaded by dagster_project.reconcile.
{{ config(enabled=var('pool_inputs', 'tapes') == 'reported') }}

with

source as (
    select * from {{ source('raw', 'reported_pool_inputs') }}
),

renamed as (
    select * from source
)

select * from renamed
