-- One row per Distribution Date: the pool-level figures the waterfall consumes (Exhibit A
-- lines 1-7, 12-15, 17a-c, 18a-c, 20, 21, 52, 75-79). Two ways in (var `pool_inputs`):
--   tapes    (default) the loan-level marts built from the monthly tapes;
--   reported the servicer-reported figures of published certificates (reconciliation mode,
--            loaded by dagster_project.reconcile into raw.reported_pool_inputs).
with

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

{% if var('pool_inputs', 'tapes') == 'reported' %}

pool as (
    select
        calendar.collection_period,
        reported.*
    from {{ source('raw', 'reported_pool_inputs') }} as reported
    inner join calendar on reported.distribution_date = calendar.distribution_date
),

{% else %}

    pool_periods as (
        select * from {{ ref('fct_pool_period') }}
    ),

    libor as (
        select * from {{ ref('stg_market__libor_rates') }}
    ),

    net_worth as (
        select * from {{ ref('stg_market__tangible_net_worth') }}
    ),

    earnings as (
        select * from {{ ref('stg_trustee__account_earnings') }}
    ),

    pool as (
        select
            pool_periods.collection_period,
            pool_periods.beginning_pool_balance,
            pool_periods.principal_collections_amount,
            pool_periods.purchase_principal_amount,
            pool_periods.defaulted_receivables_amount,
            pool_periods.ending_pool_balance,
            pool_periods.receivables_outstanding,
            pool_periods.initial_pool_balance,
            pool_periods.weighted_average_coupon_percent,
            pool_periods.weighted_average_original_term,
            pool_periods.weighted_average_remaining_term,
            libor.libor_rate,
            pool_periods.finance_charge_collections_amount,
            pool_periods.liquidation_finance_charge_amount,
            pool_periods.purchase_finance_charge_amount,
            pool_periods.liquidation_principal_amount,
            pool_periods.collection_account_interest_amount,
            pool_periods.simple_interest_advances_amount,
            coalesce(earnings.reserve_investment_earnings_amount, 0) as reserve_investment_earnings_amount,
            -- 4.4(b): the tapes carry no determination that an advance is unrecoverable; CarMax as
            -- Servicer has no successor-servicer costs (8.2) or Additional Servicing Fee (Art. I)
            0::decimal(18, 2) as unreimbursed_servicer_advances_amount,
            0::decimal(18, 2) as transition_expenses_amount,
            0::decimal(18, 2) as indemnity_amounts_amount,
            0::decimal(18, 2) as additional_servicing_fee_amount,
            net_worth.tangible_net_worth_amount,
            pool_periods.net_losses_amount,
            pool_periods.cumulative_net_losses_amount,
            pool_periods.cumulative_net_loss_percent,
            pool_periods.delinquent_31_60_count,
            pool_periods.delinquent_31_60_balance,
            pool_periods.delinquent_61_90_count,
            pool_periods.delinquent_61_90_balance,
            pool_periods.delinquent_91_plus_count,
            pool_periods.delinquent_91_plus_balance
        from pool_periods
        inner join calendar on pool_periods.collection_period = calendar.collection_period
        left join libor on calendar.distribution_date = libor.distribution_date
        left join earnings on calendar.distribution_date = earnings.distribution_date
        -- Art. I "Related Fiscal Quarter"
        left join net_worth on calendar.related_fiscal_quarter_end_date = net_worth.fiscal_quarter_end_date
    ),

{% endif %}

final as (
    select
        calendar.period_number,
        calendar.distribution_date,
        calendar.determination_date,
        calendar.collection_period_start_date,
        calendar.collection_period_end_date,
        calendar.actual_accrual_days,
        calendar.thirty_360_accrual_days,
        calendar.related_fiscal_quarter_end_date,
        pool.* exclude (pool.collection_period{% if var('pool_inputs', 'tapes') == 'reported' %}, pool.distribution_date{% endif %})
    from pool
    inner join calendar on pool.collection_period = calendar.collection_period
)

select * from final
