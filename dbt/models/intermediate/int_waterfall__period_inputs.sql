-- One row per trust and Distribution Date: the pool-level figures the waterfall consumes (Exhibit A
-- lines 1-7, 10, 12-15, 17a-c, 18a-c, 20, 21, 52, 75-79). Two ways in (var `pool_inputs`):
--   tapes    (default) the loan-level marts built from the monthly tapes;
--   reported the servicer-reported figures of published certificates (reconciliation mode,
--            loaded by dagster_project.reconcile).
with

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

{% if var('pool_inputs', 'tapes') == 'reported' %}

    pool as (
        select
            reported.*,
            calendar.collection_period
        from {{ ref('stg_reported__pool_inputs') }} as reported
        inner join calendar
            on reported.deal_id = calendar.deal_id and reported.distribution_date = calendar.distribution_date
    ),

{% else %}

    pool_periods as (
        select * from {{ ref('fct_pool_period') }}
    ),

    index_rates as (
        select * from {{ ref('stg_market__index_rates') }}
    ),

    net_worth as (
        select * from {{ ref('stg_market__tangible_net_worth') }}
    ),

    earnings as (
        select * from {{ ref('stg_trustee__account_earnings') }}
    ),

    pool as (
        select
            pool_periods.deal_id,
            pool_periods.collection_period,
            pool_periods.beginning_pool_balance,
            pool_periods.principal_collections_amount,
            pool_periods.purchase_principal_amount,
            pool_periods.defaulted_receivables_amount,
            pool_periods.ending_pool_balance,
            pool_periods.receivables_outstanding,
            pool_periods.initial_pool_balance,
            -- Exhibit A line 12 prints the coupon to two decimals (half up)
            {{ from_cents(div_half_up('(pool_periods.weighted_average_coupon_percent * 10000000000)::' ~ cents_type(),
                '100000000')) }} as weighted_average_coupon_percent,
            pool_periods.weighted_average_original_term,
            pool_periods.weighted_average_remaining_term,
            index_rates.index_rate,
            pool_periods.finance_charge_collections_amount,
            pool_periods.liquidation_finance_charge_amount,
            pool_periods.purchase_finance_charge_amount,
            pool_periods.liquidation_principal_amount,
            pool_periods.collection_account_interest_amount,
            pool_periods.simple_interest_advances_amount,
            coalesce(earnings.reserve_investment_earnings_amount, 0) as reserve_investment_earnings_amount,
            pool_periods.unreimbursed_servicer_advances_amount,
            -- CarMax as Servicer has no successor-servicer costs (8.2) or Additional Servicing Fee
            -- (Art. I)
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
        inner join calendar
            on pool_periods.deal_id = calendar.deal_id and pool_periods.collection_period = calendar.collection_period
        left join index_rates
            on calendar.deal_id = index_rates.deal_id and calendar.distribution_date = index_rates.distribution_date
        left join earnings
            on calendar.deal_id = earnings.deal_id and calendar.distribution_date = earnings.distribution_date
        -- Art. I "Related Fiscal Quarter"
        left join net_worth on calendar.related_fiscal_quarter_end_date = net_worth.fiscal_quarter_end_date
    ),

{% endif %}

final as (
    select
        calendar.deal_id,
        calendar.period_number,
        calendar.collection_period,
        calendar.distribution_date,
        calendar.determination_date,
        calendar.collection_period_start_date,
        calendar.collection_period_end_date,
        calendar.actual_accrual_days,
        calendar.thirty_360_accrual_days,
        calendar.related_fiscal_quarter_end_date,
        {{ star_except(['deal_id', 'collection_period'] + (['distribution_date'] if var('pool_inputs', 'tapes') == 'reported' else []), 'pool') }},
        -- Art. I "Overcollateralization Target Amount": a share of the cutoff Pool Balance, or of
        -- the Pool Balance at the end of the Collection Period with a floor as a share of the
        -- cutoff Pool Balance (older trusts of the shelf); half up to the cent
        {{ from_cents(
            "case deals.overcollateralization_base when 'cutoff' then "
            ~ div_half_up(to_cents('deals.initial_pool_balance') ~ ' * (deals.overcollateralization_percent * 1000000000)::' ~ cents_type(), '1000000000')
            ~ " else greatest("
            ~ div_half_up(to_cents('pool.ending_pool_balance') ~ ' * (deals.overcollateralization_percent * 1000000000)::' ~ cents_type(), '1000000000')
            ~ ", "
            ~ div_half_up(to_cents('deals.initial_pool_balance') ~ ' * (deals.overcollateralization_floor_percent * 1000000000)::' ~ cents_type(), '1000000000')
            ~ ") end"
        ) }} as overcollateralization_target_amount
    from pool
    inner join calendar on pool.deal_id = calendar.deal_id and pool.collection_period = calendar.collection_period
    inner join deals on pool.deal_id = deals.deal_id
)

select * from final
