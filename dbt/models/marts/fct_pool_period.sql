-- One row per trust and Collection Period: the pool roll-forward (Exhibit A lines 1-7), the
-- collections the certificate needs (lines 17-22), losses (lines 75-77), delinquency (line 78) and
-- the weighted averages (lines 12-14).
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

prepayments as (
    -- scheduled and prepaid principal, SMM, CPR and the ABS speed (int_collection_period__prepayments)
    select * from {{ ref('int_collection_period__prepayments') }}
),

advances as (
    -- 4.4 and 4.2 per Collection Period (int_receivable_period__simple_interest_advances)
    select
        deal_id,
        collection_period,
        sum(simple_interest_advance_amount) as simple_interest_advances_deposited_amount,
        sum(reimbursement_retained_amount) as simple_interest_advance_reimbursements_amount,
        sum(unreimbursed_servicer_advance_amount) as unreimbursed_servicer_advances_amount,
        sum(outstanding_advance_amount) as outstanding_simple_interest_advances_amount
    from {{ ref('int_receivable_period__simple_interest_advances') }}
    group by deal_id, collection_period
),

per_period as (
    -- only the Collection Periods the loan-level models computed: every earlier tape is loaded
    -- (int_collection_period__tape_status)
    select
        {{ star_except([
            'period_number', 'receivable_periods_tested', 'not_recomputed_count',
            'servicer_roll_forward_break_count', 'servicer_continuity_break_count',
            'charge_off_mismatch_count', 'extension_beyond_final_date_count', 'missing_receivable_count'
        ]) }}
    from period_totals
),

cutoff as (
    select
        deal_id,
        sum(cutoff_principal_balance) as initial_pool_balance,
        count(*) as initial_receivable_count
    from schedule
    group by deal_id
),

rolled as (
    select
        calendar.deal_id,
        calendar.period_number,
        calendar.collection_period,
        calendar.collection_period_start_date,
        calendar.collection_period_end_date,
        calendar.determination_date,
        calendar.distribution_date,
        coalesce(
            lag(per_period.ending_pool_balance) over (partition by calendar.deal_id order by calendar.period_number),
            cutoff.initial_pool_balance
        ) as beginning_pool_balance,
        {{ star_except([
            'deal_id', 'collection_period', 'apr_weighted_cents',
            'original_term_weighted_cents', 'remaining_term_weighted_cents'
        ], 'per_period') }},
        coalesce(prepayments.scheduled_principal_amount, 0) as scheduled_principal_amount,
        coalesce(prepayments.prepaid_principal_amount, 0) as prepaid_principal_amount,
        coalesce(prepayments.single_month_mortality_percent, 0) as single_month_mortality_percent,
        coalesce(prepayments.conditional_prepayment_rate_percent, 0)
            as conditional_prepayment_rate_percent,
        coalesce(prepayments.abs_speed_percent, 0) as abs_speed_percent,
        coalesce(advances.simple_interest_advances_deposited_amount, 0)
            as simple_interest_advances_deposited_amount,
        coalesce(advances.simple_interest_advance_reimbursements_amount, 0)
            as simple_interest_advance_reimbursements_amount,
        -- Exhibit A line 21: the advances deposited (4.4(a)) less what the Servicer retained from
        -- the period's receipts to reimburse earlier ones (4.2; Art. I "Available Collections"
        -- excludes those amounts, and line 19 reports the receipts whole)
        coalesce(advances.simple_interest_advances_deposited_amount, 0)
        - coalesce(advances.simple_interest_advance_reimbursements_amount, 0)
            as simple_interest_advances_amount,
        -- line 27: advances determined unrecoverable (Art. I "Unreimbursed Servicer Advance")
        coalesce(advances.unreimbursed_servicer_advances_amount, 0) as unreimbursed_servicer_advances_amount,
        coalesce(advances.outstanding_simple_interest_advances_amount, 0)
            as outstanding_simple_interest_advances_amount,
        cutoff.initial_pool_balance,
        coalesce(earnings.collection_account_interest_amount, 0) as collection_account_interest_amount,
        -- lines 12-14, weighted by the ending Principal Balance (none for an empty pool); the
        -- coupon is kept to ten decimals, the certificate rounds it to two (int_waterfall__period_inputs)
        case
            when per_period.ending_pool_balance > 0 then
            {{ percent_of('per_period.apr_weighted_cents',
                to_cents('per_period.ending_pool_balance') ~ ' * 1000000') }}
        end as weighted_average_coupon_percent,
        case
            when per_period.ending_pool_balance > 0 then
            {{ from_cents(div_half_up('per_period.original_term_weighted_cents * 100',
                to_cents('per_period.ending_pool_balance'))) }}
        end as weighted_average_original_term,
        case
            when per_period.ending_pool_balance > 0 then
            {{ from_cents(div_half_up('per_period.remaining_term_weighted_cents * 100',
                to_cents('per_period.ending_pool_balance'))) }}
        end as weighted_average_remaining_term
    from per_period
    inner join calendar
        on per_period.deal_id = calendar.deal_id and per_period.collection_period = calendar.collection_period
    inner join cutoff on per_period.deal_id = cutoff.deal_id
    left join advances
        on per_period.deal_id = advances.deal_id and per_period.collection_period = advances.collection_period
    left join prepayments
        on per_period.deal_id = prepayments.deal_id and per_period.collection_period = prepayments.collection_period
    left join earnings
        on calendar.deal_id = earnings.deal_id and calendar.distribution_date = earnings.distribution_date
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
        -- Art. I "Net Losses" (line 75): the excess, if any, of the principal that defaulted over
        -- the Liquidation Proceeds received in the Collection Period: never negative
        greatest(defaulted_receivables_amount - liquidation_proceeds_amount, 0) as net_losses_amount,
        -- line 76 (not defined in Art. I): the same excess over every Collection Period to date,
        -- so a month whose recoveries exceed its defaults lowers it
        greatest(
            sum(defaulted_receivables_amount - liquidation_proceeds_amount)
                over (partition by deal_id order by period_number),
            0
        ) as cumulative_net_losses_amount
    from rolled
)

select
    *,
    -- line 77: Cumulative Net Losses over the Initial Pool Balance, as a percentage (unrounded;
    -- the certificate prints two decimals)
    {{ percent_of(to_cents('cumulative_net_losses_amount'), to_cents('initial_pool_balance')) }}
        as cumulative_net_loss_percent
from final
