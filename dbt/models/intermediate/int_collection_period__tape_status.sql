-- One row per trust and Collection Period of its calendar up to the last one delivered: whether its
-- tape is loaded, whether a delivery for it was rejected (and why), and whether it can be
-- computed: balances carry forward from period to period, so a period is computed only when its
-- tape and every earlier period's tape are loaded. The loan-level models compute only those
-- periods; the certificate gate withholds the others with the reason.
{{ config(materialized='table') }}

with

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

deliveries as (
    select * from {{ ref('stg_ingestion__deliveries') }}
    where file_kind in ('loan_status', 'payment_transactions')
),

tapes as (
    select
        deal_id,
        delivery_scope as collection_period,
        coalesce(bool_or(delivery_status = 'loaded' and file_kind = 'loan_status'), false) as is_tape_loaded,
        -- the latest rejected delivery, if it came after the loaded one (a rejected restatement
        -- leaves the loaded delivery standing)
        {{ max_by_non_null('first_finding', 'received_at') }} filter (where delivery_status = 'rejected') as rejected_finding,
        max(received_at) filter (where delivery_status = 'rejected') as rejected_at,
        max(received_at) filter (where delivery_status = 'loaded') as loaded_at
    from deliveries
    group by deal_id, delivery_scope
),

statuses as (
    select
        calendar.deal_id,
        calendar.collection_period,
        calendar.period_number,
        calendar.distribution_date,
        coalesce(tapes.is_tape_loaded, false) as is_tape_loaded,
        tapes.rejected_finding,
        tapes.rejected_at is not null and (tapes.loaded_at is null or tapes.rejected_at > tapes.loaded_at)
            as is_latest_delivery_rejected,
        tapes.deal_id is not null as is_delivered,
        coalesce(bool_and(coalesce(tapes.is_tape_loaded, false)) over so_far, false) as is_computable
    from calendar
    left join tapes
        on calendar.deal_id = tapes.deal_id and calendar.collection_period = tapes.collection_period
    window so_far as (
        partition by calendar.deal_id order by calendar.period_number
        rows between unbounded preceding and current row
    )
),

last_delivered as (
    select
        deal_id,
        max(period_number) as period_number
    from statuses
    where is_delivered
    group by deal_id
),

final as (
    select statuses.*
    from statuses
    inner join last_delivered
        on statuses.deal_id = last_delivered.deal_id and statuses.period_number <= last_delivered.period_number
)

select * from final
