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
        list(class_id order by class_order) as class_ids,
        list(class_tier order by class_order) as tiers,
        list(principal_order order by class_order) as orders,
        list(rate_type order by class_order) as rate_types,
        list(fixed_rate order by class_order) as fixed_rates,
        list(coalesce(floating_spread, 0) order by class_order) as spreads,
        list(day_count order by class_order) as day_counts,
        list({{ to_cents('first_period_interest_amount') }} order by class_order) as first_interest_cents,
        list(final_distribution_date order by class_order) as final_dates,
        list({{ to_cents('initial_balance') }} order by class_order) as initial_cents,
        list(is_last_in_tier order by class_order) as last_in_tier,
        list(is_last_in_order order by class_order) as last_in_order,
        any_value(terms_row.servicing_rate_nanos) as servicing_rate_nanos,
        any_value(terms_row.transition_cap_cents) as transition_cap_cents,
        any_value(terms_row.specified_reserve_cents) as specified_reserve_cents,
        any_value(terms_row.overcollateralization_target_cents) as overcollateralization_target_cents
    from ranked_classes
    cross join (
        select
            (max(term_value) filter (where term_name = 'servicing_rate')::decimal(12, 9)
                * 1000000000)::hugeint as servicing_rate_nanos,
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

state as (
    select *, list_sum(balances)::hugeint as balances_total from opening_state
    union all
    select
        i.period_number,
        next_state.balances_end,
        next_state.unpaid_interest_end,
        next_state.reserve_balance_end,
        next_state.servicing_fee_unpaid_end,
        next_state.advances_unpaid_end,
        next_state.transition_unpaid_end,
        next_state.indemnity_unpaid_end,
        next_state.additional_fee_unpaid_end,
        next_state.capped_paid_to_date_end,
        list_sum(next_state.balances_end)::hugeint
    from state as s
    inner join inputs as i on i.period_number = s.period_number + 1
    cross join deal as d
    {{ waterfall_step() }}
),

final as (
    select
        i.period_number,
        i.distribution_date,
        d.class_ids,
        d.initial_cents,
        rates.rate_nanos,
        s.balances as balances_begin,
        accrued.monthly_interest,
        accrued.additional_interest,
        accrued.interest_on_additional,
        dues.total_interest,
        x5.interest_paid,
        x6.principal_paid,
        next_state.balances_end,
        next_state.unpaid_interest_end,
        dues.note_balance_before,
        list_sum(next_state.balances_end)::hugeint as note_balance_after,
        i.beginning_pool_cents,
        i.ending_pool_cents,
        i.available_collections_cents,
        d.overcollateralization_target_cents,
        dues.monthly_servicing_fee,
        s.servicing_fee_unpaid as servicing_fee_unpaid_prior,
        owed.total_servicing_fee,
        owed.advances_due,
        owed.interest_due_a,
        owed.interest_due_b,
        owed.interest_due_c,
        owed.interest_due_d,
        owed.transition_due,
        owed.indemnity_due,
        owed.additional_fee_due,
        r13.transition_after_cap,
        r13.indemnity_after_cap,
        principal_due.capped_transition_due,
        pa.priority_principal,
        pb.secondary_principal,
        pc.tertiary_principal,
        pd.quaternary_principal,
        principal_due.regular_principal,
        reserve_test.required_payment_amount,
        reserve_test.reserve_released_in_full,
        reserve_test.note_balance_after_principal_due,
        s.reserve_balance as reserve_beginning_balance,
        i.reserve_earnings_cents,
        reserve_test.reserve_account_amount,
        reserve.reserve_draw,
        d.specified_reserve_cents,
        reserve.required_reserve,
        funds.available_funds,
        funds.reserve_deficiency,
        w1.paid_fee,
        w2.paid_advances,
        w3.paid_capped,
        w4.paid_interest_a,
        w5.paid_priority,
        w6.paid_interest_b,
        w7.paid_secondary,
        w8.paid_interest_c,
        w9.paid_tertiary,
        w10.paid_interest_d,
        w11.paid_quaternary,
        w12.paid_reserve_deposit,
        w13.paid_regular,
        w14.paid_transition_rest,
        w15.paid_additional_fee,
        w16.paid_indemnity_rest,
        w17.excess_collections,
        w17.reserve_excess,
        x1.reserve_to_principal,
        x2.reserve_to_transition + x3.reserve_to_additional_fee as reserve_to_successor_servicer,
        x4.reserve_to_certificateholder,
        x4.principal_paid_total,
        next_state.reserve_balance_end,
        next_state.servicing_fee_unpaid_end
    from state as s
    inner join inputs as i on i.period_number = s.period_number + 1
    cross join deal as d
    {{ waterfall_step() }}
)

select * from final
