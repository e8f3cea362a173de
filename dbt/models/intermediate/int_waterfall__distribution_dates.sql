-- One row per Distribution Date: every amount of the waterfall (integer cents; per-class amounts as
-- lists in class order). The state (class balances, unpaid interest, Reserve Account balance,
-- unpaid fees) is carried from one Distribution Date to the next by a recursive CTE; the rules of
-- one date are the macro waterfall_step (macros/waterfall_step.sql), used for the recursion and
-- for the amounts exposed here.
with recursive

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

terms as (
    select * from {{ ref('stg_deal__terms') }}
),

period_inputs as (
    select * from {{ ref('int_waterfall__period_inputs') }}
),

opening as (
    select * from {{ ref('int_waterfall__opening_state') }}
),

ranked_classes as (
    select
        *,
        class_order = max(class_order) over (partition by class_tier) as is_last_in_tier,
        class_order = max(class_order) over (partition by principal_order) as is_last_in_order
    from classes
),

deal as (
    select
        count(*) as class_count,
        list(ranked_classes.class_id order by ranked_classes.class_order) as class_ids,
        list(ranked_classes.class_tier order by ranked_classes.class_order) as tiers,
        list(ranked_classes.principal_order order by ranked_classes.class_order) as orders,
        list(ranked_classes.rate_type order by ranked_classes.class_order) as rate_types,
        list(ranked_classes.fixed_rate order by ranked_classes.class_order) as fixed_rates,
        list(coalesce(ranked_classes.floating_spread, 0) order by ranked_classes.class_order) as spreads,
        list(ranked_classes.day_count order by ranked_classes.class_order) as day_counts,
        list({{ to_cents('ranked_classes.first_period_interest_amount') }} order by ranked_classes.class_order) as first_interest_cents,
        list(ranked_classes.final_distribution_date order by ranked_classes.class_order) as final_dates,
        list({{ to_cents('ranked_classes.initial_balance') }} order by ranked_classes.class_order) as initial_cents,
        list(ranked_classes.is_last_in_tier order by ranked_classes.class_order) as last_in_tier,
        list(ranked_classes.is_last_in_order order by ranked_classes.class_order) as last_in_order,
        any_value(terms_row.servicing_rate_nanos) as servicing_rate_nanos,
        any_value(terms_row.transition_cap_cents) as transition_cap_cents,
        any_value(terms_row.specified_reserve_cents) as specified_reserve_cents,
        any_value(terms_row.overcollateralization_target_cents) as overcollateralization_target_cents
    from ranked_classes
    cross join (
        select
            (
                max(term_value) filter (where term_name = 'servicing_rate')::decimal(12, 9) * 1000000000
            )::hugeint as servicing_rate_nanos,
            {{ to_cents("max(term_value) filter (where term_name = 'successor_transition_cap')::decimal(18, 2)") }}
                as transition_cap_cents,
            {{ to_cents("max(term_value) filter (where term_name = 'required_reserve_amount')::decimal(18, 2)") }}
                as specified_reserve_cents,
            {{ to_cents("max(term_value) filter (where term_name = 'overcollateralization_target_amount')::decimal(18, 2)") }}
                as overcollateralization_target_cents
        from terms
    ) as terms_row
),

inputs as (
    select
        *,
        {{ to_cents('beginning_pool_balance') }} as beginning_pool_cents,
        {{ to_cents('ending_pool_balance') }} as ending_pool_cents,
        {{ to_cents('coalesce(reserve_investment_earnings_amount, 0)') }} as reserve_earnings_cents,
        {{ to_cents('coalesce(unreimbursed_servicer_advances_amount, 0)') }} as unreimbursed_advances_cents,
        {{ to_cents('coalesce(transition_expenses_amount, 0)') }} as transition_cents,
        {{ to_cents('coalesce(indemnity_amounts_amount, 0)') }} as indemnity_cents,
        {{ to_cents('coalesce(additional_servicing_fee_amount, 0)') }} as additional_fee_cents,
        -- Art. I "Available Collections" (Exhibit A line 22 = 17d + 18d + 20 + 21)
        {{ to_cents('finance_charge_collections_amount + liquidation_finance_charge_amount
            + purchase_finance_charge_amount + principal_collections_amount
            + liquidation_principal_amount + purchase_principal_amount
            + coalesce(collection_account_interest_amount, 0)
            + coalesce(simple_interest_advances_amount, 0)') }} as available_collections_cents
    from period_inputs
),

opening_state as (
    select
        max(period_number) as period_number,
        list({{ to_cents('note_balance') }} order by class_order)::hugeint[] as balances,
        list({{ to_cents('unpaid_interest') }} order by class_order)::hugeint[] as unpaid_interest,
        {{ to_cents('max(reserve_account_balance)') }} as reserve_balance,
        {{ to_cents('max(servicing_fee_unpaid)') }} as servicing_fee_unpaid,
        0::hugeint as advances_unpaid,
        0::hugeint as transition_unpaid,
        0::hugeint as indemnity_unpaid,
        0::hugeint as additional_fee_unpaid,
        0::hugeint as capped_paid_to_date
    from opening
),

{#- the step's base: the state after the previous Distribution Date, the period's inputs, the deal -#}
{%- set base -%}
    select
        inputs.*,
        deal.*,
        state.* exclude (state.period_number)
    from state
    inner join inputs on state.period_number + 1 = inputs.period_number
    cross join deal
{%- endset %}

state as (
    select
        *,
        list_sum(balances)::hugeint as balances_total
    from opening_state
    union all
    select
        period_number,
        balances_end,
        unpaid_interest_end,
        reserve_balance_end,
        servicing_fee_unpaid_end,
        advances_unpaid_end,
        transition_unpaid_end,
        indemnity_unpaid_end,
        additional_fee_unpaid_end,
        capped_paid_to_date_end,
        list_sum(balances_end)::hugeint as balances_total
    from (
        {{ waterfall_step(base) }}
    ) as step
),

final as (
    select
        period_number,
        distribution_date,
        class_ids,
        initial_cents,
        rate_nanos,
        balances as balances_begin,
        monthly_interest,
        additional_interest,
        interest_on_additional,
        total_interest,
        interest_paid,
        principal_paid,
        balances_end,
        unpaid_interest_end,
        note_balance_before,
        list_sum(balances_end)::hugeint as note_balance_after,
        beginning_pool_cents,
        ending_pool_cents,
        available_collections_cents,
        overcollateralization_target_cents,
        monthly_servicing_fee,
        servicing_fee_unpaid as servicing_fee_unpaid_prior,
        total_servicing_fee,
        advances_due,
        interest_due_a,
        interest_due_b,
        interest_due_c,
        interest_due_d,
        transition_due,
        indemnity_due,
        additional_fee_due,
        transition_after_cap,
        indemnity_after_cap,
        capped_transition_due,
        priority_principal,
        secondary_principal,
        tertiary_principal,
        quaternary_principal,
        regular_principal,
        required_payment_amount,
        reserve_released_in_full,
        note_balance_after_principal_due,
        reserve_balance as reserve_beginning_balance,
        reserve_earnings_cents,
        reserve_account_amount,
        reserve_draw,
        specified_reserve_cents,
        required_reserve,
        available_funds,
        reserve_deficiency,
        paid_fee,
        paid_advances,
        paid_capped,
        paid_interest_a,
        paid_priority,
        paid_interest_b,
        paid_secondary,
        paid_interest_c,
        paid_tertiary,
        paid_interest_d,
        paid_quaternary,
        paid_reserve_deposit,
        paid_regular,
        paid_transition_rest,
        paid_additional_fee,
        paid_indemnity_rest,
        excess_collections,
        reserve_excess,
        reserve_to_principal,
        reserve_to_transition + reserve_to_additional_fee as reserve_to_successor_servicer,
        reserve_to_certificateholder,
        principal_paid_total,
        reserve_balance_end,
        servicing_fee_unpaid_end
    from (
        {{ waterfall_step(base) }}
    ) as step
)

select * from final
