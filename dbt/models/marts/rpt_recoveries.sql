-- Recoveries by default cohort: for each trust and Collection Period of default, the principal
-- that defaulted (Art. I "Defaulted Receivable"), the Liquidation Proceeds received on those
-- receivables to date (Art. I "Liquidation Proceeds", net of expenses), the recovery rate and the
-- proceeds-weighted lag in months from the period of default to the period of receipt.
-- Rates are exact (integer cents, half up at ten decimals, money.sql's percent_of).
-- A table: proceeds reach a cohort in any later period, so every build computes it whole (one
-- grouping of the shelf's defaults, where each report read it again as a view).
{{ config(materialized='table') }}

with

periods as (
    -- every default and every receipt of Liquidation Proceeds is among these rows
    select * from {{ ref('int_receivable_period__outcomes') }}
),

defaults as (
    select
        deal_id,
        receivable_id,
        collection_period as default_collection_period,
        period_number as default_period_number,
        {{ to_cents('defaulted_principal_amount') }} as defaulted_cents
    from periods
    where is_default_period
),

receipts as (
    select
        defaults.deal_id,
        defaults.default_collection_period,
        defaults.default_period_number,
        periods.period_number - defaults.default_period_number as months_after_default,
        {{ to_cents('periods.liquidation_proceeds_amount') }} as proceeds_cents
    from defaults
    inner join periods
        on
            defaults.deal_id = periods.deal_id
            and defaults.receivable_id = periods.receivable_id
            and defaults.default_period_number <= periods.period_number
    where periods.liquidation_proceeds_amount <> 0
),

cohorts as (
    select
        deal_id,
        default_collection_period,
        default_period_number,
        count(*) as defaulted_receivable_count,
        sum(defaulted_cents) as defaulted_cents
    from defaults
    group by deal_id, default_collection_period, default_period_number
),

recovered as (
    select
        deal_id,
        default_period_number,
        sum(proceeds_cents) as proceeds_cents,
        sum(proceeds_cents * months_after_default) as proceeds_months_cents,
        max(months_after_default) as last_receipt_months_after_default
    from receipts
    group by deal_id, default_period_number
)

select
    cohorts.deal_id,
    cohorts.default_collection_period,
    cohorts.default_period_number,
    cohorts.defaulted_receivable_count,
    {{ from_cents('cohorts.defaulted_cents') }} as defaulted_principal_amount,
    {{ from_cents('coalesce(recovered.proceeds_cents, 0)') }} as liquidation_proceeds_amount,
    {{ percent_of('coalesce(recovered.proceeds_cents, 0)', 'cohorts.defaulted_cents') }}
        as recovery_rate_percent,
    -- months from the period of default to the receipt, weighted by the proceeds (ten decimals)
    {{ scaled(div_half_up(widened('coalesce(recovered.proceeds_months_cents, 0)') ~ ' * 10000000000', 'greatest(coalesce(recovered.proceeds_cents, 0), 1)'), 10) }}::decimal(24, 10)
        as weighted_recovery_lag_months,
    recovered.last_receipt_months_after_default
from cohorts
left join recovered
    on cohorts.deal_id = recovered.deal_id and cohorts.default_period_number = recovered.default_period_number
