-- One row per Collection Period: the pool roll-forward (Exhibit A lines 1-7), the collections
-- the certificate needs (lines 17-22), losses (lines 75-77), delinquency (line 78) and the
-- weighted averages (lines 12-14).
with

period_totals as (
    -- sums and counts over each Collection Period's receivable-periods (incremental)
    select * from {{ ref('int_collection_period__receivable_totals') }}
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

per_period as (
    -- a period is computed only when every earlier period's tape is loaded: balances carry
    -- forward, so a period after a missing one cannot be right (its certificate is withheld by
    -- the gate until the missing tape arrives; rpt_servicing_criteria says why)
    select
        * exclude (
            period_number, loaded_rank, receivable_periods_tested, not_recomputed_count,
            servicer_roll_forward_break_count, servicer_continuity_break_count,
            charge_off_mismatch_count, extension_beyond_final_date_count, missing_receivable_count
        )
    from (
        select
            *,
            row_number() over (order by period_number) as loaded_rank
        from period_totals
    ) as ranked
    where period_number = loaded_rank
),

cutoff as (
    select
        sum(cutoff_principal_balance) as initial_pool_balance,
        count(*) as initial_receivable_count
    from schedule
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
        exclude (
            per_period.collection_period, per_period.apr_weighted_cents,
            per_period.original_term_weighted_cents, per_period.remaining_term_weighted_cents
        ),
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
