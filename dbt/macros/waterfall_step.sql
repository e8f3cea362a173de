{#-
    One Distribution Date of the waterfall, as a stack of projections over `base`, a query whose
    columns (unqualified) are those of three relations:
      the state after the previous Distribution Date (integer cents; lists in class order),
      the period's pool inputs (int_waterfall__period_inputs, money in cents),
      the deal (one row: class attributes as lists, deal terms in cents or nanos).
    Each step adds named amounts computed from the columns beneath it: `select *, <step> from
    (<the steps before>)`. (A chain of LATERAL joins reads the same, but DuckDB took about 1.5 s
    to plan one, twice per build.) Used twice by int_waterfall__distribution_dates: in the
    recursive CTE that carries the state and in the final select that exposes every amount, so
    the rules live here once.
    All money is integer cents; every product that needs rounding goes through div_half_up
    (half away from zero, to the cent), which is where the certificate rounds.
-#}

{#- sum over classes j of `value` where `condition` (both in terms of the lambda variable j) -#}
{% macro class_sum(value, condition) -%}
    list_sum(list_transform(range(1, class_count + 1),
        lambda j: case when {{ condition }} then {{ value }} else 0 end))::hugeint
{%- endmacro %}

{#- a list over classes k of `expression` (in terms of the lambda variable k) -#}
{% macro per_class(expression) -%}
    list_transform(range(1, class_count + 1), lambda k: ({{ expression }})::hugeint)
{%- endmacro %}

{% macro waterfall_step(base) %}
    {%- set steps = [] %}
    {%- set step -%}
        -- Note Rates and day counts (Art. I "Class ... Rate", "Class ... Monthly Interest")
        {{ per_class("case when rate_types[k] = 'floating'
            then ((libor_rate + spreads[k]) * 1000000000)
            else (fixed_rates[k] * 1000000000) end") }} as rate_nanos,
        -- actual/360: days from the previous Distribution Date; 30/360: one-twelfth (30 days)
        {{ per_class("case when day_counts[k] = 'actual/360'
            then actual_accrual_days else thirty_360_accrual_days end") }} as accrual_days
    {%- endset %}{% do steps.append(('rates', step)) %}
    {%- set step -%}
        -- Monthly Interest on the balance after the previous date's principal; the initial
        -- Distribution Date uses the fixed amounts of Art. I. Additional Note Interest: unpaid
        -- interest carried, plus interest on it at the Note Rate (Art. I)
        {{ per_class("case when period_number = 1 and first_interest_cents[k] is not null
            then first_interest_cents[k]
            else " ~ div_half_up('balances[k] * rate_nanos[k] * accrual_days[k]',
                '360000000000') ~ " end") }} as monthly_interest,
        unpaid_interest as additional_interest,
        {{ per_class(div_half_up('unpaid_interest[k] * rate_nanos[k] * accrual_days[k]',
            '360000000000')) }} as interest_on_additional
    {%- endset %}{% do steps.append(('accrued', step)) %}
    {%- set step -%}
        {{ per_class('monthly_interest[k] + additional_interest[k]
            + interest_on_additional[k]') }} as total_interest,
        -- 3.8: one-twelfth of the Servicing Rate x Pool Balance at the start of the period
        {{ div_half_up('beginning_pool_cents * servicing_rate_nanos', '12000000000') }}
        as monthly_servicing_fee,
        balances_total as note_balance_before
    {%- endset %}{% do steps.append(('dues', step)) %}
    {%- set step -%}
        monthly_servicing_fee + servicing_fee_unpaid as total_servicing_fee,
        unreimbursed_advances_cents + advances_unpaid as advances_due,
        transition_cents + transition_unpaid as transition_due,
        indemnity_cents + indemnity_unpaid as indemnity_due,
        additional_fee_cents + additional_fee_unpaid as additional_fee_due,
        -- tier interest due and tier balances (A, B, C, D = Priority .. Quaternary)
        {% for tier in ['A', 'B', 'C', 'D'] -%}
        {{ class_sum('total_interest[j]', "tiers[j] = '" ~ tier ~ "'") }} as interest_due_{{ tier | lower }},
        -- balance of the tiers senior to and including this one, as of the day before
        {{ class_sum('balances[j]', "tiers[j] <= '" ~ tier ~ "'") }} as cumulative_balance_{{ tier | lower }},
        -- Class Final Distribution Date override: the outstanding balance of such Class (with
        -- the classes of its tier ahead of it, which principal reaches first)
        coalesce(list_max(list_transform(range(1, class_count + 1), lambda k:
            case when tiers[k] = '{{ tier }}' and final_dates[k] <= distribution_date
                then {{ class_sum('balances[j]', "tiers[j] = '" ~ tier ~ "' and orders[j] <= orders[k]") }}
            end)), 0)::hugeint as final_date_override_{{ tier | lower }}{{ ',' if not loop.last }}
        {% endfor %}
    {%- endset %}{% do steps.append(('owed', step)) %}
    {%- set step -%}
        -- Art. I Priority / Secondary / Tertiary / Quaternary Principal Distributable Amounts
        greatest(greatest(cumulative_balance_a - ending_pool_cents, 0),
        final_date_override_a)::hugeint as priority_principal
    {%- endset %}{% do steps.append(('pa', step)) %}
    {%- set step -%}
        greatest(greatest(greatest(cumulative_balance_b - ending_pool_cents, 0)
        - priority_principal, 0), final_date_override_b)::hugeint as secondary_principal
    {%- endset %}{% do steps.append(('pb', step)) %}
    {%- set step -%}
        greatest(greatest(greatest(cumulative_balance_c - ending_pool_cents, 0)
        - priority_principal - secondary_principal, 0),
        final_date_override_c)::hugeint as tertiary_principal
    {%- endset %}{% do steps.append(('pc', step)) %}
    {%- set step -%}
        greatest(greatest(greatest(cumulative_balance_d - ending_pool_cents, 0)
        - priority_principal - secondary_principal - tertiary_principal, 0),
        final_date_override_d)::hugeint as quaternary_principal
    {%- endset %}{% do steps.append(('pd', step)) %}
    {%- set step -%}
        priority_principal + secondary_principal + tertiary_principal
        + quaternary_principal as tiered_principal,
        -- Art. I "Regular Principal Distributable Amount": lesser of the Note Balance and
        -- (Note Balance + Overcollateralization Target - Pool Balance) minus the tiered amounts
        greatest(least(note_balance_before,
            greatest(note_balance_before + overcollateralization_target_cents
                - ending_pool_cents, 0)
            - (priority_principal + secondary_principal + tertiary_principal
                + quaternary_principal)), 0)::hugeint as regular_principal,
        -- 4.6(a)(xii) Required Payment Amount: lines 26-36 (28 at its cap)
        least(transition_due + indemnity_due,
            greatest(transition_cap_cents - capped_paid_to_date, 0)) as capped_transition_due
    {%- endset %}{% do steps.append(('principal_due', step)) %}
    {%- set step -%}
        -- Reserve Account (4.6(b), 4.7, 4.1(d), Art. I "Required Reserve Account Amount")
        reserve_balance + reserve_earnings_cents as reserve_account_amount,
        total_servicing_fee + advances_due + capped_transition_due
        + interest_due_a + interest_due_b + interest_due_c + interest_due_d
        + tiered_principal as required_payment_amount,
        -- 4.1(d): Collection Account and Reserve Account cover the Note Balance, Total Note
        -- Interest and Total Servicing Fee with Unreimbursed Servicer Advances
        available_collections_cents + reserve_balance + reserve_earnings_cents
            >= note_balance_before + interest_due_a + interest_due_b
            + interest_due_c + interest_due_d + total_servicing_fee
            + advances_due as reserve_released_in_full,
        note_balance_before - tiered_principal
        - regular_principal as note_balance_after_principal_due
    {%- endset %}{% do steps.append(('reserve_test', step)) %}
    {%- set step -%}
        case
            when reserve_released_in_full or ending_pool_cents = 0
                then reserve_account_amount
            else least(greatest(required_payment_amount
                - available_collections_cents, 0), reserve_account_amount)
        end::hugeint as reserve_draw,
        -- capped at the Note Balance after the principal due today (the amount the definition
        -- measures after payments; using the amount due avoids a circular definition);
        -- $0 when the Pool Balance is zero or under 4.1(d)
        case
            when reserve_released_in_full or ending_pool_cents = 0 then 0
            else least(specified_reserve_cents, note_balance_after_principal_due)
        end::hugeint as required_reserve
    {%- endset %}{% do steps.append(('reserve', step)) %}
    {%- set step -%}
        available_collections_cents + reserve_draw as available_funds,
        greatest(required_reserve
            - (reserve_account_amount - reserve_draw), 0)::hugeint
        as reserve_deficiency
    {%- endset %}{% do steps.append(('funds', step)) %}
    {%- set step -%}
        -- Indenture 2.8(a), in the order of Exhibit A lines 26-42: each step pays the lesser of what
        -- is due and what remains
        least(available_funds, total_servicing_fee) as paid_fee
    {%- endset %}{% do steps.append(('w1', step)) %}
    {%- set step -%}
        least(available_funds - paid_fee, advances_due) as paid_advances
    {%- endset %}{% do steps.append(('w2', step)) %}
    {%- set step -%}
        available_funds - paid_fee - paid_advances as left_2
    {%- endset %}{% do steps.append(('r2', step)) %}
    {%- set step -%}
        least(left_2, capped_transition_due) as paid_capped
    {%- endset %}{% do steps.append(('w3', step)) %}
    {%- set step -%}
        least(left_2 - paid_capped, interest_due_a) as paid_interest_a
    {%- endset %}{% do steps.append(('w4', step)) %}
    {%- set step -%}
        left_2 - paid_capped - paid_interest_a as left_4
    {%- endset %}{% do steps.append(('r4', step)) %}
    {%- set step -%}
        least(left_4, priority_principal) as paid_priority
    {%- endset %}{% do steps.append(('w5', step)) %}
    {%- set step -%}
        least(left_4 - paid_priority, interest_due_b) as paid_interest_b
    {%- endset %}{% do steps.append(('w6', step)) %}
    {%- set step -%}
        left_4 - paid_priority - paid_interest_b as left_6
    {%- endset %}{% do steps.append(('r6', step)) %}
    {%- set step -%}
        least(left_6, secondary_principal) as paid_secondary
    {%- endset %}{% do steps.append(('w7', step)) %}
    {%- set step -%}
        least(left_6 - paid_secondary, interest_due_c) as paid_interest_c
    {%- endset %}{% do steps.append(('w8', step)) %}
    {%- set step -%}
        left_6 - paid_secondary - paid_interest_c as left_8
    {%- endset %}{% do steps.append(('r8', step)) %}
    {%- set step -%}
        least(left_8, tertiary_principal) as paid_tertiary
    {%- endset %}{% do steps.append(('w9', step)) %}
    {%- set step -%}
        least(left_8 - paid_tertiary, interest_due_d) as paid_interest_d
    {%- endset %}{% do steps.append(('w10', step)) %}
    {%- set step -%}
        left_8 - paid_tertiary - paid_interest_d as left_10
    {%- endset %}{% do steps.append(('r10', step)) %}
    {%- set step -%}
        least(left_10, quaternary_principal) as paid_quaternary
    {%- endset %}{% do steps.append(('w11', step)) %}
    {%- set step -%}
        least(left_10 - paid_quaternary, reserve_deficiency) as paid_reserve_deposit
    {%- endset %}{% do steps.append(('w12', step)) %}
    {%- set step -%}
        left_10 - paid_quaternary - paid_reserve_deposit as left_12
    {%- endset %}{% do steps.append(('r12', step)) %}
    {%- set step -%}
        least(left_12, regular_principal) as paid_regular
    {%- endset %}{% do steps.append(('w13', step)) %}
    {%- set step -%}
        -- line 28 pays transition expenses first, then indemnities
        transition_due - least(paid_capped, transition_due) as transition_after_cap,
        indemnity_due - (paid_capped - least(paid_capped, transition_due))
        as indemnity_after_cap,
        left_12 - paid_regular as left_13
    {%- endset %}{% do steps.append(('r13', step)) %}
    {%- set step -%}
        least(left_13, transition_after_cap) as paid_transition_rest
    {%- endset %}{% do steps.append(('w14', step)) %}
    {%- set step -%}
        least(left_13 - paid_transition_rest, additional_fee_due) as paid_additional_fee
    {%- endset %}{% do steps.append(('w15', step)) %}
    {%- set step -%}
        least(left_13 - paid_transition_rest - paid_additional_fee,
        indemnity_after_cap) as paid_indemnity_rest
    {%- endset %}{% do steps.append(('w16', step)) %}
    {%- set step -%}
        -- Excess Collections (Indenture 2.8(a)(xv)): what is left
        left_13 - paid_transition_rest - paid_additional_fee
        - paid_indemnity_rest as excess_collections,
        -- 4.7(d): Reserve Account excess over the Required Reserve Account Amount
        greatest(reserve_account_amount - reserve_draw
            - required_reserve, 0)::hugeint as reserve_excess
    {%- endset %}{% do steps.append(('w17', step)) %}
    {%- set step -%}
        least(reserve_excess, regular_principal - paid_regular)
        as reserve_to_principal
    {%- endset %}{% do steps.append(('x1', step)) %}
    {%- set step -%}
        least(reserve_excess - reserve_to_principal,
        transition_after_cap - paid_transition_rest) as reserve_to_transition
    {%- endset %}{% do steps.append(('x2', step)) %}
    {%- set step -%}
        least(reserve_excess - reserve_to_principal - reserve_to_transition,
        additional_fee_due - paid_additional_fee) as reserve_to_additional_fee
    {%- endset %}{% do steps.append(('x3', step)) %}
    {%- set step -%}
        reserve_excess - reserve_to_principal - reserve_to_transition
        - reserve_to_additional_fee as reserve_to_certificateholder,
        paid_priority + paid_secondary + paid_tertiary + paid_quaternary
        + paid_regular + reserve_to_principal as principal_paid_total,
        -- interest paid by tier, to each class pro rata to its Total Note Interest
        {{ per_class("case tiers[k] when 'A' then paid_interest_a when 'B' then paid_interest_b
            when 'C' then paid_interest_c else paid_interest_d end") }} as tier_interest_paid,
        {{ per_class("case tiers[k] when 'A' then interest_due_a when 'B' then interest_due_b
            when 'C' then interest_due_c else interest_due_d end") }} as tier_interest_due
    {%- endset %}{% do steps.append(('x4', step)) %}
    {%- set step -%}
        {{ per_class("case when tier_interest_paid[k] = tier_interest_due[k]
            then total_interest[k]
            when last_in_tier[k] then tier_interest_paid[k] - "
            ~ class_sum(div_half_up('tier_interest_paid[j] * total_interest[j]',
                'greatest(tier_interest_due[j], 1)'), 'tiers[j] = tiers[k] and j <> k')
            ~ " else " ~ div_half_up('tier_interest_paid[k] * total_interest[k]',
                'greatest(tier_interest_due[k], 1)') ~ " end") }} as interest_paid,
        -- Indenture 2.8(d): principal sequentially by principal_order; classes sharing an
        -- order (A-2a, A-2b) pro rata to their balances
        {{ per_class("least(" ~ class_sum('balances[j]', 'orders[j] = orders[k]')
            ~ ", greatest(principal_paid_total - "
            ~ class_sum('balances[j]', 'orders[j] < orders[k]') ~ ", 0))") }} as group_principal,
        {{ per_class(class_sum('balances[j]', 'orders[j] = orders[k]')) }} as group_balance
    {%- endset %}{% do steps.append(('x5', step)) %}
    {%- set step -%}
        {{ per_class("case when group_principal[k] = group_balance[k] then balances[k]
        when last_in_order[k] then group_principal[k] - "
        ~ class_sum(div_half_up('group_principal[j] * balances[j]',
            'greatest(group_balance[j], 1)'), 'orders[j] = orders[k] and j <> k')
        ~ " else " ~ div_half_up('group_principal[k] * balances[k]',
            'greatest(group_balance[k], 1)') ~ " end") }} as principal_paid
    {%- endset %}{% do steps.append(('x6', step)) %}
    {%- set step -%}
        {{ per_class('balances[k] - principal_paid[k]') }} as balances_end,
        {{ per_class('total_interest[k] - interest_paid[k]') }} as unpaid_interest_end,
        reserve_account_amount - reserve_draw + paid_reserve_deposit
        - reserve_excess as reserve_balance_end,
        total_servicing_fee - paid_fee as servicing_fee_unpaid_end,
        advances_due - paid_advances as advances_unpaid_end,
        transition_after_cap - paid_transition_rest - reserve_to_transition
        as transition_unpaid_end,
        indemnity_after_cap - paid_indemnity_rest as indemnity_unpaid_end,
        additional_fee_due - paid_additional_fee - reserve_to_additional_fee
        as additional_fee_unpaid_end,
        capped_paid_to_date + paid_capped as capped_paid_to_date_end
    {%- endset %}{% do steps.append(('next_state', step)) %}
    {%- set query = namespace(sql=base) %}
    {%- for name, step in steps %}
        {%- set query.sql = 'select\n    *,\n    ' ~ step ~ '\nfrom (\n' ~ query.sql ~ '\n) as ' ~ name %}
    {%- endfor %}
    {{- query.sql }}
{% endmacro %}
