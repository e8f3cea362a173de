-- The receivable-periods that carry an outcome: the period of default (Art. I "Defaulted
-- Receivable") or of purchase (Art. I "Purchased Receivable"), any period not outstanding, and
-- any with defaulted principal, Liquidation Proceeds, a Net Loss or a Purchase Amount. About one
-- receivable-period in fifty: dim_receivable and rpt_recoveries group these rows, not every
-- receivable-period of the shelf.
-- Incremental (macros/incremental.sql): a period's rows need only that period's receivable-periods,
-- so a build recomputes the periods of its window (a period may have none: the window's rows are
-- deleted first) and keeps the others.
{{ loan_level_incremental_config() }}
{{ config(pre_hook="{{ delete_window_rows() }}") }}

with

periods as (
    select * from {{ ref('fct_receivable_period') }}
    where {{ is_rebuilt() }}
),

final as (
    select
        deal_id,
        receivable_id,
        collection_period,
        period_number,
        is_outstanding,
        is_default_period,
        is_defaulted,
        is_purchase_period,
        is_purchased,
        default_reason,
        defaulted_principal_amount,
        liquidation_proceeds_amount,
        net_loss_amount,
        purchase_principal_amount,
        purchase_interest_amount
    from periods
    where
        is_default_period
        or is_purchase_period
        or not is_outstanding
        or defaulted_principal_amount <> 0
        or liquidation_proceeds_amount <> 0
        or net_loss_amount <> 0
        or purchase_principal_amount + purchase_interest_amount <> 0
)

select * from final
