-- One row per receivable: Receivable Schedule attributes (no personal data) and how it left the pool.
with

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

periods as (
    -- the receivable-periods that carry an outcome (the others are outstanding, zero amounts)
    select * from {{ ref('int_receivable_period__outcomes') }}
),

outcomes as (
    select
        deal_id,
        receivable_id,
        min(collection_period) filter (where is_default_period) as default_collection_period,
        min(collection_period) filter (where is_purchase_period) as purchase_collection_period,
        min(collection_period) filter (where not is_outstanding and not is_defaulted and not is_purchased)
            as paid_off_collection_period,
        any_value(default_reason) filter (where is_default_period) as default_reason,
        sum(defaulted_principal_amount) as defaulted_principal_amount,
        sum(liquidation_proceeds_amount) as liquidation_proceeds_amount,
        sum(net_loss_amount) as net_loss_amount,
        sum(purchase_principal_amount + purchase_interest_amount) as purchase_amount
    -- a receivable with no such row is outstanding with zero amounts (the left join's defaults)
    from periods
    group by deal_id, receivable_id
),

final as (
    select
        {{ star_except(['obligor_key'], 'schedule') }},
        schedule.obligor_key,
        case
            when outcomes.purchase_collection_period is not null then 'purchased'
            when outcomes.default_collection_period is not null then 'defaulted'
            when outcomes.paid_off_collection_period is not null then 'paid_off'
            else 'outstanding'
        end as lifecycle_outcome,
        outcomes.default_collection_period,
        outcomes.default_reason,
        outcomes.purchase_collection_period,
        outcomes.paid_off_collection_period,
        coalesce(outcomes.defaulted_principal_amount, 0) as defaulted_principal_amount,
        coalesce(outcomes.liquidation_proceeds_amount, 0) as liquidation_proceeds_amount,
        coalesce(outcomes.net_loss_amount, 0) as net_loss_amount,
        coalesce(outcomes.purchase_amount, 0) as purchase_amount,
        date_trunc('quarter', schedule.origination_date)::date as origination_quarter
    from schedule
    left join outcomes
        on schedule.deal_id = outcomes.deal_id and schedule.receivable_id = outcomes.receivable_id
)

select * from final
