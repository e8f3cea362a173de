-- One row per Collection Period: the pool roll-forward (Exhibit A lines 1-7), the collections
-- the certificate needs (lines 17-22), losses (lines 75-77), delinquency (line 78) and the
-- weighted averages (lines 12-14).
with

loaded_receivable_periods as (
    select * from {{ ref('fct_receivable_period') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

earnings as (
    select * from {{ ref('stg_trustee__account_earnings') }}
),

complete_periods as (
    -- a period is computed only when every earlier period's tape is loaded: balances carry
    -- forward, so a period after a missing one cannot be right (its certificate is withheld by
    -- the gate until the missing tape arrives; rpt_servicing_criteria says why)
    select collection_period
    from (
        select
            collection_period,
            period_number,
            row_number() over (order by period_number) as loaded_rank
        from (select distinct collection_period, period_number from loaded_receivable_periods)
    )
    where period_number = loaded_rank
),

receivable_periods as (
    select loaded_receivable_periods.*
    from loaded_receivable_periods
    inner join complete_periods
        on loaded_receivable_periods.collection_period = complete_periods.collection_period
),

cutoff as (
    select
        sum(cutoff_principal_balance) as initial_pool_balance,
        count(*) as initial_receivable_count
    from schedule
),

per_period as (
    select
        periods.collection_period,
        sum(periods.principal_collected_amount + periods.rebate_principal_amount)
        as principal_collections_amount,
        sum(periods.interest_collected_amount) as finance_charge_collections_amount,
        sum(periods.purchase_principal_amount) as purchase_principal_amount,
        sum(periods.purchase_interest_amount) as purchase_finance_charge_amount,
        sum(periods.defaulted_principal_amount) as defaulted_receivables_amount,
        sum(periods.liquidation_principal_amount) as liquidation_principal_amount,
        sum(periods.liquidation_interest_amount) as liquidation_finance_charge_amount,
        sum(periods.liquidation_proceeds_amount) as liquidation_proceeds_amount,
        sum(periods.fees_collected_amount) as supplemental_servicing_fees_amount,
        sum(periods.simple_interest_advance_amount) as simple_interest_advances_amount,
        sum(periods.ending_balance) as ending_pool_balance,
        count(*) filter (where periods.is_outstanding) as receivables_outstanding,
        count(*) filter (where periods.is_default_period) as receivables_defaulted,
        count(*) filter (where periods.is_purchase_period) as receivables_purchased,
        -- weighted by the ending Principal Balance, in integer cents (exact)
        sum({{ to_cents('periods.ending_balance') }} * (schedule.apr * 1000000)::bigint)
        as apr_weighted_cents,
        sum({{ to_cents('periods.ending_balance') }} * schedule.original_term_months)
        as original_term_weighted_cents,
        sum({{ to_cents('periods.ending_balance') }}
            * greatest(datediff('month', calendar.collection_period_end_date, periods.maturity_date), 0))
        as remaining_term_weighted_cents
        {%- for bucket in ['31-60', '61-90', '91+'] %},
        count(*) filter (where periods.delinquency_bucket = '{{ bucket }}')
        as delinquent_{{ bucket | replace('-', '_') | replace('+', '_plus') }}_count,
        coalesce(sum(periods.ending_balance) filter (where periods.delinquency_bucket = '{{ bucket }}'), 0)
        as delinquent_{{ bucket | replace('-', '_') | replace('+', '_plus') }}_balance
        {%- endfor %},
        count(*) filter (where periods.delinquency_bucket = 'current') as current_count,
        coalesce(sum(periods.ending_balance) filter (where periods.delinquency_bucket = 'current'), 0)
        as current_balance,
        count(*) filter (where periods.delinquency_bucket = '1-30') as delinquent_1_30_count,
        coalesce(sum(periods.ending_balance) filter (where periods.delinquency_bucket = '1-30'), 0)
        as delinquent_1_30_balance
    from receivable_periods as periods
    inner join schedule on periods.receivable_id = schedule.receivable_id
    inner join calendar on periods.collection_period = calendar.collection_period
    group by periods.collection_period
),

rolled as (
    select
        calendar.period_number,
        calendar.collection_period,
        calendar.collection_period_start_date,
        calendar.collection_period_end_date,
        calendar.determination_date,
        calendar.distribution_date,
        coalesce(
            lag(per_period.ending_pool_balance) over (order by calendar.period_number),
            cutoff.initial_pool_balance
        ) as beginning_pool_balance,
        per_period.*
        exclude (collection_period, apr_weighted_cents, original_term_weighted_cents,
            remaining_term_weighted_cents),
        cutoff.initial_pool_balance,
        coalesce(earnings.collection_account_interest_amount, 0) as collection_account_interest_amount,
        {{ from_cents(div_half_up('per_period.apr_weighted_cents',
            'greatest(' ~ to_cents('per_period.ending_pool_balance') ~ ', 1) * 100')) }}
        as weighted_average_coupon_percent,
        {{ from_cents(div_half_up('per_period.original_term_weighted_cents * 100',
            'greatest(' ~ to_cents('per_period.ending_pool_balance') ~ ', 1)')) }}
        as weighted_average_original_term,
        {{ from_cents(div_half_up('per_period.remaining_term_weighted_cents * 100',
            'greatest(' ~ to_cents('per_period.ending_pool_balance') ~ ', 1)')) }}
        as weighted_average_remaining_term
    from per_period
    inner join calendar on per_period.collection_period = calendar.collection_period
    cross join cutoff
    left join earnings on calendar.distribution_date = earnings.distribution_date
),

final as (
    select
        *,
        -- Exhibit A line 5 = 1 - 2 - 3 - 4
        beginning_pool_balance - principal_collections_amount - purchase_principal_amount
        - defaulted_receivables_amount as rolled_forward_pool_balance,
        -- lines 17d, 18d, 19, 22: Available Collections exclude Supplemental Servicing Fees (Art. I)
        finance_charge_collections_amount + liquidation_finance_charge_amount
        + purchase_finance_charge_amount as available_finance_charge_collections_amount,
        principal_collections_amount + liquidation_principal_amount
        + purchase_principal_amount as available_principal_collections_amount,
        finance_charge_collections_amount + liquidation_finance_charge_amount
        + purchase_finance_charge_amount + principal_collections_amount + liquidation_principal_amount
        + purchase_principal_amount + collection_account_interest_amount
        + simple_interest_advances_amount as available_collections_amount,
        -- Art. I "Net Losses" (line 75) and their cumulative figures (lines 76-77)
        defaulted_receivables_amount - liquidation_proceeds_amount as net_losses_amount,
        sum(defaulted_receivables_amount - liquidation_proceeds_amount)
            over (order by period_number) as cumulative_net_losses_amount
    from rolled
)

select
    *,
    {{ from_cents(div_half_up(to_cents('cumulative_net_losses_amount') ~ ' * 10000',
        to_cents('initial_pool_balance'))) }} as cumulative_net_loss_percent
from final
