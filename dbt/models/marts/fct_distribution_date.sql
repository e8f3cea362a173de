-- One row per trust and Distribution Date: every figure of the Monthly Servicer's Certificate that
-- is not per class, as a typed column named by its certificate key (dagster_project/
-- certificate_layout.py): the pool figures, the waterfall's amounts due and paid, the accounts.
-- rpt_servicer_certificate prints these; analysts and the reports read them here.
with

waterfall as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
),

inputs as (
    select * from {{ ref('int_waterfall__period_inputs') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

dates as (
    -- the trust's amounts are on every class row of a date: one of them
    select * from waterfall
    where {{ json_text('amounts', '$.class.class_order') }}::integer = 1
),

floating_spread as (
    select
        deal_id,
        max(floating_spread) as floating_spread
    from classes
    group by deal_id
),

amounts as (
    select
        dates.deal_id,
        dates.period_number,
        -- Note Balance before and after the date (lines 8 begin and end, total)
        {{ waterfall_amount('note_balance_before_cents') }} as note_balance_before_amount,
        {{ waterfall_amount('note_balance_before_cents') }}
        - {{ waterfall_amount('principal_paid_cents') }} as note_balance_after_amount,
        {{ waterfall_amount('available_collections_cents') }} as available_collections_amount,
        {{ waterfall_amount('reserve_draw_cents') }} as reserve_account_draw_amount,
        {{ waterfall_amount('available_funds_cents') }} as available_funds_amount,
        -- lines 26-42: the priority of payments (due and paid)
        {{ waterfall_amount('monthly_servicing_fee_cents') }} as monthly_servicing_fee_amount,
        {{ waterfall_amount('servicing_fee_unpaid_prior_cents') }} as servicing_fee_unpaid_prior_amount,
        {{ waterfall_amount('total_servicing_fee_cents') }} as total_servicing_fee_amount,
        {{ waterfall_amount('servicing_fee_paid_cents') }} as servicing_fee_paid_amount,
        {{ waterfall_amount('advances_due_cents') }} as unreimbursed_servicer_advances_amount,
        {{ waterfall_amount('unreimbursed_servicer_advances_paid_cents') }} as unreimbursed_servicer_advances_paid_amount,
        {{ waterfall_amount('capped_transition_due_cents') }} as capped_transition_due_amount,
        {{ waterfall_amount('capped_successor_servicer_amounts_paid_cents') }} as capped_transition_paid_amount,
        {% for tier in ['a', 'b', 'c', 'd'] %}
            {{ waterfall_amount('interest_due_' ~ tier ~ '_cents') }} as class_{{ tier }}_interest_due_amount,
            {{ waterfall_amount('class_' ~ tier ~ '_interest_paid_cents') }} as class_{{ tier }}_interest_paid_amount,
        {% endfor %}
        {% for name in ['priority', 'secondary', 'tertiary', 'quaternary'] %}
            {{ waterfall_amount(name ~ '_principal_cents') }} as {{ name }}_principal_distributable_amount,
            {{ waterfall_amount(name ~ '_principal_paid_cents') }} as {{ name }}_principal_paid_amount,
        {% endfor %}
        {{ waterfall_amount('required_payment_cents') }} as required_payment_amount,
        {{ waterfall_amount('reserve_deficiency_cents') }} as reserve_account_deficiency_amount,
        {{ waterfall_amount('reserve_account_deficiency_paid_cents') }} as reserve_account_deposit_amount,
        {{ waterfall_amount('regular_principal_cents') }} as regular_principal_distributable_amount,
        {{ waterfall_amount('regular_principal_paid_cents') }} as regular_principal_paid_amount,
        {{ waterfall_amount('remaining_transition_expenses_paid_cents') }} as remaining_transition_expenses_paid_amount,
        {{ waterfall_amount('additional_servicing_fee_paid_cents') }} as additional_servicing_fee_paid_amount,
        {{ waterfall_amount('remaining_indemnity_amounts_paid_cents') }} as remaining_indemnity_paid_amount,
        {{ waterfall_amount('excess_collections_paid_cents') }} as excess_collections_amount,
        -- the Reserve Account (4.6(b), 4.7; lines 49-59)
        {{ waterfall_amount('reserve_beginning_cents') }} as reserve_account_beginning_balance,
        {{ waterfall_amount('reserve_earnings_cents') }} as reserve_account_investment_earnings,
        {{ waterfall_amount('reserve_after_draw_cents') }} as reserve_account_amount_after_draw,
        {{ waterfall_amount('specified_reserve_cents') }} as specified_reserve_account_amount,
        {{ waterfall_amount('required_reserve_cents') }} as reserve_target_amount,
        {{ waterfall_amount('reserve_excess_cents') }} as reserve_excess_amount,
        {{ waterfall_amount('reserve_excess_to_principal_paid_cents') }} as reserve_released_to_principal_amount,
        {{ waterfall_amount('reserve_excess_to_successor_servicer_paid_cents') }}
            as reserve_released_to_successor_servicer_amount,
        {{ waterfall_amount('reserve_excess_to_certificateholder_paid_cents') }}
            as reserve_released_to_certificateholder_amount,
        {{ waterfall_amount('reserve_balance_end_cents') }} as reserve_account_ending_balance,
        {{ waterfall_amount('principal_paid_cents') }} as principal_paid_amount,
        {{ waterfall_amount('note_balance_after_principal_due_cents') }} as note_balance_after_principal_due_amount,
        {{ json_text('dates.amounts', '$.deal.is_reserve_released_in_full') }}::boolean as is_reserve_released_in_full
    from dates
),

final as (
    select
        -- ids
        inputs.deal_id,
        inputs.period_number,
        inputs.collection_period,
        -- dates
        inputs.distribution_date,
        inputs.determination_date,
        inputs.collection_period_start_date,
        inputs.collection_period_end_date,
        inputs.related_fiscal_quarter_end_date,
        -- lines 1-7
        inputs.beginning_pool_balance,
        inputs.principal_collections_amount,
        inputs.purchase_principal_amount,
        inputs.defaulted_receivables_amount,
        inputs.ending_pool_balance,
        inputs.receivables_outstanding,
        inputs.initial_pool_balance,
        amounts.note_balance_before_amount,
        amounts.note_balance_after_amount,
        -- lines 10-16
        inputs.overcollateralization_target_amount,
        inputs.ending_pool_balance - amounts.note_balance_after_amount as overcollateralization_amount,
        inputs.weighted_average_coupon_percent,
        inputs.weighted_average_original_term,
        inputs.weighted_average_remaining_term,
        inputs.index_rate * 100 as index_rate,
        (inputs.index_rate + floating_spread.floating_spread) * 100 as floating_note_rate,
        -- lines 17-25
        inputs.finance_charge_collections_amount,
        inputs.liquidation_finance_charge_amount,
        inputs.purchase_finance_charge_amount,
        inputs.finance_charge_collections_amount + inputs.liquidation_finance_charge_amount
        + inputs.purchase_finance_charge_amount as available_finance_charge_collections_amount,
        inputs.liquidation_principal_amount,
        inputs.principal_collections_amount + inputs.liquidation_principal_amount
        + inputs.purchase_principal_amount as available_principal_collections_amount,
        inputs.finance_charge_collections_amount + inputs.liquidation_finance_charge_amount
        + inputs.purchase_finance_charge_amount + inputs.principal_collections_amount
        + inputs.liquidation_principal_amount + inputs.purchase_principal_amount as total_collections_amount,
        coalesce(inputs.collection_account_interest_amount, 0) as collection_account_interest_amount,
        coalesce(inputs.simple_interest_advances_amount, 0) as simple_interest_advances_amount,
        {{ star_except(['deal_id', 'period_number', 'note_balance_before_amount', 'note_balance_after_amount'], 'amounts') }},
        amounts.total_servicing_fee_amount - amounts.servicing_fee_paid_amount as servicing_fee_shortfall_amount,
        amounts.capped_transition_due_amount - amounts.capped_transition_paid_amount
            as capped_transition_shortfall_amount,
        -- lines 43-48: account activity (43a carries the Simple Interest Advances of line 21, so
        -- that 43e equals Available Funds)
        inputs.finance_charge_collections_amount + inputs.liquidation_finance_charge_amount
        + inputs.purchase_finance_charge_amount + coalesce(inputs.simple_interest_advances_amount, 0)
            as collection_deposit_finance_charge_amount,
        amounts.servicing_fee_paid_amount + amounts.unreimbursed_servicer_advances_paid_amount
        + amounts.additional_servicing_fee_paid_amount as paid_to_servicer_amount,
        amounts.capped_transition_paid_amount + amounts.remaining_transition_expenses_paid_amount
        + amounts.remaining_indemnity_paid_amount as paid_to_successor_servicer_amount,
        amounts.class_a_interest_paid_amount + amounts.class_b_interest_paid_amount
        + amounts.class_c_interest_paid_amount + amounts.class_d_interest_paid_amount
            as interest_paid_amount,
        amounts.class_a_interest_paid_amount + amounts.class_b_interest_paid_amount
        + amounts.class_c_interest_paid_amount + amounts.class_d_interest_paid_amount
        + amounts.principal_paid_amount - amounts.reserve_released_to_principal_amount
            as collection_to_note_payment_amount,
        amounts.available_funds_amount as collection_withdrawals_amount,
        amounts.class_a_interest_paid_amount + amounts.class_b_interest_paid_amount
        + amounts.class_c_interest_paid_amount + amounts.class_d_interest_paid_amount
        + amounts.principal_paid_amount as note_payment_deposits_amount,
        amounts.class_a_interest_paid_amount + amounts.class_b_interest_paid_amount
        + amounts.class_c_interest_paid_amount + amounts.class_d_interest_paid_amount
        + amounts.principal_paid_amount as note_payment_withdrawals_amount,
        amounts.excess_collections_amount + amounts.reserve_released_to_certificateholder_amount
            as certificate_payment_deposits_amount,
        -- line 49b: the Note Balance after the day's principal payments, and line 50, Art. I
        -- "Required Reserve Account Amount": the lesser of 49a and 49b ($0 when the Pool Balance
        -- is zero or under 4.1(d)); what the Reserve Account lacks of it after the day (line 59)
        -- is deposited on the next Distribution Date
        amounts.note_balance_after_amount as note_balance_after_principal_paid_amount,
        case
            when amounts.is_reserve_released_in_full or inputs.ending_pool_balance = 0 then 0
            else least(amounts.specified_reserve_account_amount, amounts.note_balance_after_amount)
        end as required_reserve_account_amount,
        greatest(
            case
                when amounts.is_reserve_released_in_full or inputs.ending_pool_balance = 0 then 0
                else least(amounts.specified_reserve_account_amount, amounts.note_balance_after_amount)
            end - amounts.reserve_account_ending_balance,
            0
        ) as reserve_account_ending_deficiency_amount,
        -- lines 75-80
        inputs.net_losses_amount,
        inputs.cumulative_net_losses_amount,
        inputs.cumulative_net_loss_percent,
        inputs.delinquent_31_60_count,
        inputs.delinquent_31_60_balance,
        inputs.delinquent_61_90_count,
        inputs.delinquent_61_90_balance,
        inputs.delinquent_91_plus_count,
        inputs.delinquent_91_plus_balance,
        inputs.delinquent_31_60_count + inputs.delinquent_61_90_count + inputs.delinquent_91_plus_count
            as delinquent_total_count,
        inputs.delinquent_31_60_balance + inputs.delinquent_61_90_balance + inputs.delinquent_91_plus_balance
            as delinquent_total_balance,
        inputs.tangible_net_worth_amount,
        -- Art. I "Special Unrated Servicer Tangible Net Worth Event": the test of line 80 is met
        -- (false, with is_tangible_net_worth_reported false, when the figure is not delivered)
        coalesce(inputs.tangible_net_worth_amount >= deals.tangible_net_worth_minimum_amount, false)
            as tangible_net_worth_test,
        inputs.tangible_net_worth_amount is not null as is_tangible_net_worth_reported,
        -- 9.1(a): the Servicer may purchase the pool once it is at most 10% of the cutoff balance
        inputs.ending_pool_balance <= inputs.initial_pool_balance::decimal(38, 2) * deals.clean_up_call_percent
            as is_clean_up_call_eligible
    from inputs
    inner join amounts on inputs.deal_id = amounts.deal_id and inputs.period_number = amounts.period_number
    inner join deals on inputs.deal_id = deals.deal_id
    left join floating_spread on inputs.deal_id = floating_spread.deal_id
)

select * from final
