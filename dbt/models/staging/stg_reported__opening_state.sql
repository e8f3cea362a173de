-- Reconciliation mode only (var pool_inputs = reported): the state before the first reported
-- Distribution Date, one row per class, loaded by dagster_project.reconcile.
{{ config(enabled=var('pool_inputs', 'tapes') == 'reported') }}

with

source as (
    select * from {{ source('raw', 'reported_opening_state') }}
),

renamed as (
    select
        -- ids
        deal_id,
        class_id,
        period_number,
        -- amounts
        note_balance::decimal(18, 2) as note_balance,
        unpaid_interest::decimal(18, 2) as unpaid_interest_amount,
        reserve_account_balance::decimal(18, 2) as reserve_account_balance,
        servicing_fee_unpaid::decimal(18, 2) as servicing_fee_unpaid_amount
    from source
)

select * from renamed
