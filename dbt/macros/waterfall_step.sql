{#-
    One Distribution Date of the waterfall, as a chain of LATERAL steps over three relations:
      s  the state after the previous Distribution Date (integer cents; lists in class order),
      i  the period's pool inputs (int_waterfall__period_inputs, money in cents),
      d  the deal (one row: class attributes as lists, deal terms in cents or nanos).
    Used twice by int_waterfall__distribution_dates: in the recursive CTE that carries the state
    and in the final select that exposes every amount, so the rules live here once.
    All money is integer cents; every product that needs rounding goes through div_half_up
    (half away from zero, to the cent), which is where the certificate rounds.
-#}

{#- sum over classes j of `value` where `condition` (both in terms of the lambda variable j) -#}
{% macro class_sum(value, condition) -%}
    list_sum(list_transform(range(1, d.class_count + 1),
        lambda j: case when {{ condition }} then {{ value }} else 0 end))::hugeint
{%- endmacro %}

{#- a list over classes k of `expression` (in terms of the lambda variable k) -#}
{% macro per_class(expression) -%}
    list_transform(range(1, d.class_count + 1), lambda k: ({{ expression }})::hugeint)
{%- endmacro %}

{% macro waterfall_step() %}
    -- Note Rates and day counts (Art. I "Class ... Rate", "Class ... Monthly Interest")
    , lateral (
        select
            {{ per_class("case when d.rate_types[k] = 'floating'
                then ((i.libor_rate + d.spreads[k]) * 1000000000)
                else (d.fixed_rates[k] * 1000000000) end") }} as rate_nanos,
            -- actual/360: days from the previous Distribution Date; 30/360: one-twelfth (30 days)
            {{ per_class("case when d.day_counts[k] = 'actual/360'
                then i.actual_accrual_days else i.thirty_360_accrual_days end") }} as accrual_days
    ) as rates
    -- Monthly Interest on the balance after the previous date's principal; the initial
    -- Distribution Date uses the fixed amounts of Art. I. Additional Note Interest: unpaid
    -- interest carried, plus interest on it at the Note Rate (Art. I)
    , lateral (
        select
            {{ per_class("case when i.period_number = 1 and d.first_interest_cents[k] is not null
                then d.first_interest_cents[k]
                else " ~ div_half_up('s.balances[k] * rates.rate_nanos[k] * rates.accrual_days[k]',
                    '360000000000') ~ " end") }} as monthly_interest,
            s.unpaid_interest as additional_interest,
            {{ per_class(div_half_up('s.unpaid_interest[k] * rates.rate_nanos[k] * rates.accrual_days[k]',
                '360000000000')) }} as interest_on_additional
    ) as accrued
    , lateral (
        select
            {{ per_class('accrued.monthly_interest[k] + accrued.additional_interest[k]
                + accrued.interest_on_additional[k]') }} as total_interest,
            -- 3.8: one-twelfth of the Servicing Rate x Pool Balance at the start of the period
            {{ div_half_up('i.beginning_pool_cents * d.servicing_rate_nanos', '12000000000') }}
            as monthly_servicing_fee,
            s.balances_total as note_balance_before
    ) as dues
    , lateral (
        select
            dues.monthly_servicing_fee + s.servicing_fee_unpaid as total_servicing_fee,
            i.unreimbursed_advances_cents + s.advances_unpaid as advances_due,
            i.transition_cents + s.transition_unpaid as transition_due,
            i.indemnity_cents + s.indemnity_unpaid as indemnity_due,
            i.additional_fee_cents + s.additional_fee_unpaid as additional_fee_due,
            -- tier interest due and tier balances (A, B, C, D = Priority .. Quaternary)
            {% for tier in ['A', 'B', 'C', 'D'] -%}
            {{ class_sum('dues.total_interest[j]', "d.tiers[j] = '" ~ tier ~ "'") }} as interest_due_{{ tier | lower }},
            -- balance of the tiers senior to and including this one, as of the day before
            {{ class_sum('s.balances[j]', "d.tiers[j] <= '" ~ tier ~ "'") }} as cumulative_balance_{{ tier | lower }},
            -- Class Final Distribution Date override: the outstanding balance of such Class (with
            -- the classes of its tier ahead of it, which principal reaches first)
            coalesce(list_max(list_transform(range(1, d.class_count + 1), lambda k:
                case when d.tiers[k] = '{{ tier }}' and d.final_dates[k] <= i.distribution_date
                    then {{ class_sum('s.balances[j]', "d.tiers[j] = '" ~ tier ~ "' and d.orders[j] <= d.orders[k]") }}
                end)), 0)::hugeint as final_date_override_{{ tier | lower }}{{ ',' if not loop.last }}
            {% endfor %}
    ) as owed
    -- Art. I Priority / Secondary / Tertiary / Quaternary Principal Distributable Amounts
    , lateral (
        select greatest(greatest(owed.cumulative_balance_a - i.ending_pool_cents, 0),
            owed.final_date_override_a)::hugeint as priority_principal
    ) as pa
    , lateral (
        select greatest(greatest(greatest(owed.cumulative_balance_b - i.ending_pool_cents, 0)
            - pa.priority_principal, 0), owed.final_date_override_b)::hugeint as secondary_principal
    ) as pb
    , lateral (
        select greatest(greatest(greatest(owed.cumulative_balance_c - i.ending_pool_cents, 0)
            - pa.priority_principal - pb.secondary_principal, 0),
            owed.final_date_override_c)::hugeint as tertiary_principal
    ) as pc
    , lateral (
        select greatest(greatest(greatest(owed.cumulative_balance_d - i.ending_pool_cents, 0)
            - pa.priority_principal - pb.secondary_principal - pc.tertiary_principal, 0),
            owed.final_date_override_d)::hugeint as quaternary_principal
    ) as pd
    , lateral (
        select
            pa.priority_principal + pb.secondary_principal + pc.tertiary_principal
            + pd.quaternary_principal as tiered_principal,
            -- Art. I "Regular Principal Distributable Amount": lesser of the Note Balance and
            -- (Note Balance + Overcollateralization Target - Pool Balance) minus the tiered amounts
            greatest(least(dues.note_balance_before,
                greatest(dues.note_balance_before + d.overcollateralization_target_cents
                    - i.ending_pool_cents, 0)
                - (pa.priority_principal + pb.secondary_principal + pc.tertiary_principal
                    + pd.quaternary_principal)), 0)::hugeint as regular_principal,
            -- 4.6(a)(xii) Required Payment Amount: lines 26-36 (28 at its cap)
            least(owed.transition_due + owed.indemnity_due,
                greatest(d.transition_cap_cents - s.capped_paid_to_date, 0)) as capped_transition_due
    ) as principal_due
    -- Reserve Account (4.6(b), 4.7, 4.1(d), Art. I "Required Reserve Account Amount")
    , lateral (
        select
            s.reserve_balance + i.reserve_earnings_cents as reserve_account_amount,
            owed.total_servicing_fee + owed.advances_due + principal_due.capped_transition_due
            + owed.interest_due_a + owed.interest_due_b + owed.interest_due_c + owed.interest_due_d
            + principal_due.tiered_principal as required_payment_amount,
            -- 4.1(d): Collection Account and Reserve Account cover the Note Balance, Total Note
            -- Interest and Total Servicing Fee with Unreimbursed Servicer Advances
            i.available_collections_cents + s.reserve_balance + i.reserve_earnings_cents
                >= dues.note_balance_before + owed.interest_due_a + owed.interest_due_b
                + owed.interest_due_c + owed.interest_due_d + owed.total_servicing_fee
                + owed.advances_due as reserve_released_in_full,
            dues.note_balance_before - principal_due.tiered_principal
            - principal_due.regular_principal as note_balance_after_principal_due
    ) as reserve_test
    , lateral (
        select
            case
                when reserve_test.reserve_released_in_full or i.ending_pool_cents = 0
                    then reserve_test.reserve_account_amount
                else least(greatest(reserve_test.required_payment_amount
                    - i.available_collections_cents, 0), reserve_test.reserve_account_amount)
            end::hugeint as reserve_draw,
            -- capped at the Note Balance after the principal due today (the amount the definition
            -- measures after payments; using the amount due avoids a circular definition);
            -- $0 when the Pool Balance is zero or under 4.1(d)
            case
                when reserve_test.reserve_released_in_full or i.ending_pool_cents = 0 then 0
                else least(d.specified_reserve_cents, reserve_test.note_balance_after_principal_due)
            end::hugeint as required_reserve
    ) as reserve
    , lateral (
        select
            i.available_collections_cents + reserve.reserve_draw as available_funds,
            greatest(reserve.required_reserve
                - (reserve_test.reserve_account_amount - reserve.reserve_draw), 0)::hugeint
            as reserve_deficiency
    ) as funds
    -- Indenture 2.8(a), in the order of Exhibit A lines 26-42: each step pays the lesser of what
    -- is due and what remains
    , lateral (select least(funds.available_funds, owed.total_servicing_fee) as paid_fee) as w1
    , lateral (select least(funds.available_funds - w1.paid_fee, owed.advances_due) as paid_advances) as w2
    , lateral (select funds.available_funds - w1.paid_fee - w2.paid_advances as left_2) as r2
    , lateral (select least(r2.left_2, principal_due.capped_transition_due) as paid_capped) as w3
    , lateral (select least(r2.left_2 - w3.paid_capped, owed.interest_due_a) as paid_interest_a) as w4
    , lateral (select r2.left_2 - w3.paid_capped - w4.paid_interest_a as left_4) as r4
    , lateral (select least(r4.left_4, pa.priority_principal) as paid_priority) as w5
    , lateral (select least(r4.left_4 - w5.paid_priority, owed.interest_due_b) as paid_interest_b) as w6
    , lateral (select r4.left_4 - w5.paid_priority - w6.paid_interest_b as left_6) as r6
    , lateral (select least(r6.left_6, pb.secondary_principal) as paid_secondary) as w7
    , lateral (select least(r6.left_6 - w7.paid_secondary, owed.interest_due_c) as paid_interest_c) as w8
    , lateral (select r6.left_6 - w7.paid_secondary - w8.paid_interest_c as left_8) as r8
    , lateral (select least(r8.left_8, pc.tertiary_principal) as paid_tertiary) as w9
    , lateral (select least(r8.left_8 - w9.paid_tertiary, owed.interest_due_d) as paid_interest_d) as w10
    , lateral (select r8.left_8 - w9.paid_tertiary - w10.paid_interest_d as left_10) as r10
    , lateral (select least(r10.left_10, pd.quaternary_principal) as paid_quaternary) as w11
    , lateral (select least(r10.left_10 - w11.paid_quaternary, funds.reserve_deficiency) as paid_reserve_deposit) as w12
    , lateral (select r10.left_10 - w11.paid_quaternary - w12.paid_reserve_deposit as left_12) as r12
    , lateral (select least(r12.left_12, principal_due.regular_principal) as paid_regular) as w13
    , lateral (
        select
            -- line 28 pays transition expenses first, then indemnities
            owed.transition_due - least(w3.paid_capped, owed.transition_due) as transition_after_cap,
            owed.indemnity_due - (w3.paid_capped - least(w3.paid_capped, owed.transition_due))
            as indemnity_after_cap,
            r12.left_12 - w13.paid_regular as left_13
    ) as r13
    , lateral (select least(r13.left_13, r13.transition_after_cap) as paid_transition_rest) as w14
    , lateral (select least(r13.left_13 - w14.paid_transition_rest, owed.additional_fee_due) as paid_additional_fee) as w15
    , lateral (
        select least(r13.left_13 - w14.paid_transition_rest - w15.paid_additional_fee,
            r13.indemnity_after_cap) as paid_indemnity_rest
    ) as w16
    , lateral (
        select
            -- Excess Collections (Indenture 2.8(a)(xv)): what is left
            r13.left_13 - w14.paid_transition_rest - w15.paid_additional_fee
            - w16.paid_indemnity_rest as excess_collections,
            -- 4.7(d): Reserve Account excess over the Required Reserve Account Amount
            greatest(reserve_test.reserve_account_amount - reserve.reserve_draw
                - reserve.required_reserve, 0)::hugeint as reserve_excess
    ) as w17
    , lateral (
        select
            least(w17.reserve_excess, principal_due.regular_principal - w13.paid_regular)
            as reserve_to_principal
    ) as x1
    , lateral (
        select
            least(w17.reserve_excess - x1.reserve_to_principal,
                r13.transition_after_cap - w14.paid_transition_rest) as reserve_to_transition
    ) as x2
    , lateral (
        select
            least(w17.reserve_excess - x1.reserve_to_principal - x2.reserve_to_transition,
                owed.additional_fee_due - w15.paid_additional_fee) as reserve_to_additional_fee
    ) as x3
    , lateral (
        select
            w17.reserve_excess - x1.reserve_to_principal - x2.reserve_to_transition
            - x3.reserve_to_additional_fee as reserve_to_certificateholder,
            w5.paid_priority + w7.paid_secondary + w9.paid_tertiary + w11.paid_quaternary
            + w13.paid_regular + x1.reserve_to_principal as principal_paid_total,
            -- interest paid by tier, to each class pro rata to its Total Note Interest
            {{ per_class("case d.tiers[k] when 'A' then w4.paid_interest_a when 'B' then w6.paid_interest_b
                when 'C' then w8.paid_interest_c else w10.paid_interest_d end") }} as tier_interest_paid,
            {{ per_class("case d.tiers[k] when 'A' then owed.interest_due_a when 'B' then owed.interest_due_b
                when 'C' then owed.interest_due_c else owed.interest_due_d end") }} as tier_interest_due
    ) as x4
    , lateral (
        select
            {{ per_class("case when x4.tier_interest_paid[k] = x4.tier_interest_due[k]
                then dues.total_interest[k]
                when d.last_in_tier[k] then x4.tier_interest_paid[k] - "
                ~ class_sum(div_half_up('x4.tier_interest_paid[j] * dues.total_interest[j]',
                    'greatest(x4.tier_interest_due[j], 1)'), 'd.tiers[j] = d.tiers[k] and j <> k')
                ~ " else " ~ div_half_up('x4.tier_interest_paid[k] * dues.total_interest[k]',
                    'greatest(x4.tier_interest_due[k], 1)') ~ " end") }} as interest_paid,
            -- Indenture 2.8(d): principal sequentially by principal_order; classes sharing an
            -- order (A-2a, A-2b) pro rata to their balances
            {{ per_class("least(" ~ class_sum('s.balances[j]', 'd.orders[j] = d.orders[k]')
                ~ ", greatest(x4.principal_paid_total - "
                ~ class_sum('s.balances[j]', 'd.orders[j] < d.orders[k]') ~ ", 0))") }} as group_principal,
            {{ per_class(class_sum('s.balances[j]', 'd.orders[j] = d.orders[k]')) }} as group_balance
    ) as x5
    , lateral (
        select
            {{ per_class("case when x5.group_principal[k] = x5.group_balance[k] then s.balances[k]
                when d.last_in_order[k] then x5.group_principal[k] - "
                ~ class_sum(div_half_up('x5.group_principal[j] * s.balances[j]',
                    'greatest(x5.group_balance[j], 1)'), 'd.orders[j] = d.orders[k] and j <> k')
                ~ " else " ~ div_half_up('x5.group_principal[k] * s.balances[k]',
                    'greatest(x5.group_balance[k], 1)') ~ " end") }} as principal_paid
    ) as x6
    , lateral (
        select
            {{ per_class('s.balances[k] - x6.principal_paid[k]') }} as balances_end,
            {{ per_class('dues.total_interest[k] - x5.interest_paid[k]') }} as unpaid_interest_end,
            reserve_test.reserve_account_amount - reserve.reserve_draw + w12.paid_reserve_deposit
            - w17.reserve_excess as reserve_balance_end,
            owed.total_servicing_fee - w1.paid_fee as servicing_fee_unpaid_end,
            owed.advances_due - w2.paid_advances as advances_unpaid_end,
            r13.transition_after_cap - w14.paid_transition_rest - x2.reserve_to_transition
            as transition_unpaid_end,
            r13.indemnity_after_cap - w16.paid_indemnity_rest as indemnity_unpaid_end,
            owed.additional_fee_due - w15.paid_additional_fee - x3.reserve_to_additional_fee
            as additional_fee_unpaid_end,
            s.capped_paid_to_date + w3.paid_capped as capped_paid_to_date_end
    ) as next_state
{% endmacro %}
