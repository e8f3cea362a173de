-- The shelf's static-pool curves: one row per trust and Collection Period, keyed by the deal's age
-- (months since its Cutoff Date), so trusts issued years apart line up. Every ratio is exact
-- (integer cents, half up at ten decimals, money.sql's percent_of); documents round them.

with dates as (
    select * from {{ ref('fct_distribution_date') }}
),

pool as (
    select * from {{ ref('fct_pool_period') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

joined as (
    select
        dates.deal_id,
        deals.trust_name,
        deals.cutoff_date,
        dates.collection_period,
        dates.distribution_date,
        -- the deal's age: the first Collection Period after the Cutoff Date is month 1
        {{ months_since_cutoff('dates.collection_period_start_date', 'deals.cutoff_date') }}
            as months_since_cutoff,
        dates.beginning_pool_balance,
        dates.ending_pool_balance,
        pool.initial_pool_balance,
        dates.cumulative_net_losses_amount,
        pool.defaulted_receivables_amount,
        dates.delinquent_61_90_balance + dates.delinquent_91_plus_balance as delinquent_61_plus_balance,
        pool.abs_speed_percent,
        pool.conditional_prepayment_rate_percent,
        -- the market's excess spread: finance-charge collections less the servicing fee and the
        -- note interest paid (not the excess released to the certificateholder)
        dates.available_finance_charge_collections_amount - dates.total_servicing_fee_amount
        - dates.interest_paid_amount as excess_spread_amount
    from dates
    inner join pool
        on dates.deal_id = pool.deal_id and dates.period_number = pool.period_number
    inner join deals on dates.deal_id = deals.deal_id
)

select
    deal_id,
    trust_name,
    cutoff_date,
    collection_period,
    distribution_date,
    months_since_cutoff,
    ending_pool_balance,
    initial_pool_balance,
    {{ percent_of(to_cents('ending_pool_balance'), to_cents('initial_pool_balance')) }} as pool_factor_percent,
    cumulative_net_losses_amount,
    {{ percent_of(to_cents('cumulative_net_losses_amount'), to_cents('initial_pool_balance')) }}
        as cumulative_net_loss_percent,
    {{ percent_of(to_cents('sum(defaulted_receivables_amount) over (partition by deal_id order by months_since_cutoff)'),
        to_cents('initial_pool_balance')) }} as cumulative_gross_loss_percent,
    delinquent_61_plus_balance,
    -- 60+ days delinquent (Exhibit A's 61-90 and 91+ buckets) over the ending Pool Balance
    {{ percent_of(to_cents('delinquent_61_plus_balance'), to_cents('ending_pool_balance')) }}
        as delinquent_61_plus_percent,
    abs_speed_percent,
    conditional_prepayment_rate_percent,
    excess_spread_amount,
    -- annualised: twelve months of the period's excess spread over its beginning Pool Balance
    {{ percent_of(to_cents('excess_spread_amount') ~ ' * 12', to_cents('beginning_pool_balance')) }}
        as excess_spread_annualized_percent
from joined
