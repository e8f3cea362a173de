{#-
    The distribution waterfall: from the state before a trust's first computed Distribution Date
    (`opening_state`, one row per class) and the pool figures of each Distribution Date
    (`period_inputs`), every amount of every Distribution Date, one row per class.

    The state goes from one Distribution Date to the next (class balances and unpaid interest, the
    Reserve Account, unpaid fees): a recursive CTE on DuckDB, a fold of one insert per date on
    Spark, both running the same CTEs (waterfall_next_date). Each round computes one Distribution
    Date of every trust in named steps, each named after the agreement's term or Exhibit A's line:

      class_interest        Monthly Interest, Additional Note Interest, Total Note Interest (Art. I)
      class_tiers           each tier's interest and balances, Class Final Distribution Dates
      deal_dues             servicing fee (3.8), principal distributable amounts (Art. I),
                            Required Payment Amount (4.6), Reserve Account draw (4.6(b), 4.1(d))
      reserve_target        the Required Reserve Account Amount the deposit and the release use
      payments              the priority of payments (seed priority_of_payments: Indenture 2.8(a),
                            then the Reserve Account excess of SSA 4.7(d)), macro
                            priority_of_payments
      class_payments        interest pro rata within a tier, principal sequential (2.8(d))
      next_state            what the next Distribution Date starts from

    Every amount is integer cents; products that need rounding go through div_half_up (half away
    from zero, to the cent), which is where the certificate rounds. `keys` are the columns that
    identify one waterfall (deal_id; a projection adds its scenario).
-#}

{% macro same_keys(left, right, keys) -%}
    {%- for key in keys %}{{ left }}.{{ key }} = {{ right }}.{{ key }}{{ ' and ' if not loop.last }}{% endfor -%}
{%- endmacro %}

{#- `kept_state` (DuckDB): state rows to start from besides `opening_state`, one per class at the
    last Distribution Date a build kept (the model's own rows, with the columns of next_state). -#}
{% macro distribution_waterfall(period_inputs, opening_state, keys=['deal_id'], kept_state=none) %}
    {{- return(adapter.dispatch('distribution_waterfall', 'caot')(period_inputs, opening_state, keys, kept_state)) -}}
{% endmacro %}

{#- DuckDB: a recursive CTE, one round per Distribution Date. -#}
{% macro default__distribution_waterfall(period_inputs, opening_state, keys, kept_state) %}
with recursive

{{ waterfall_relations(period_inputs, opening_state) }},

state as (
    {{ waterfall_opening_state(keys) }}
    {%- if kept_state is not none %}
    -- the kept rows are the model's own: the state's columns, by name
    union all by name
    select * replace (null::{{ json_type() }} as amounts)
    from {{ kept_state }} as kept
    {%- endif %}
    union all
    (
        with

        {{ waterfall_next_date('state', keys) }}

        select * from next_state
    )
)

select * from state
where amounts is not null
{% endmacro %}

{#- Spark: its recursive CTEs allow no aggregate, window or sort over the recursive reference,
    which every round needs, so the model is a fold (macros/period_fold.sql): the opening state,
    then one insert per Distribution Date reading the latest date of each waterfall, then the
    result. -#}
{% macro spark__distribution_waterfall(period_inputs, opening_state, keys, kept_state) %}
{%- if kept_state is not none -%}
    {{ exceptions.raise_compiler_error('distribution_waterfall: the Spark fold computes every date (no kept_state)') }}
{%- endif %}
with

{{ waterfall_relations(period_inputs, opening_state) }}

{{ waterfall_opening_state(keys) }}
{{ fold_separator() }}
with

{{ waterfall_relations(period_inputs, opening_state) }},

{{ waterfall_next_date(fold_latest(keys), keys) }}

select * from next_state
{{ fold_separator() }}
select * from {{ fold_state() }}
where amounts is not null
{% endmacro %}

{#- The relations every round reads. -#}
{% macro waterfall_relations(period_inputs, opening_state) %}
inputs as (
    select * from {{ period_inputs }}
),

opening as (
    select * from {{ opening_state }}
),

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

steps as (
    select * from {{ ref('priority_of_payments') }}
)
{%- endmacro %}

{#- The period inputs the waterfall reads for a date (`relation`: a row of them), as one text (the
    date, then integers: days, index rate in billionths, amounts in cents; an empty field for
    none), kept in each date's `amounts` ("inputs"). A column the rules read from the period
    inputs belongs in it: a monthly run recomputes a trust from the first date whose inputs are
    no longer those it was computed with (waterfall_recompute_from). -#}
{% macro waterfall_inputs_text(relation) -%}
    {%- set fields = [
        relation ~ '.distribution_date',
        relation ~ '.actual_accrual_days',
        relation ~ '.thirty_360_accrual_days',
        '(' ~ relation ~ '.index_rate * 1000000000)::' ~ cents_type(),
    ] -%}
    {%- for amount in [
        'beginning_pool_balance', 'ending_pool_balance', 'overcollateralization_target_amount',
        'principal_collections_amount', 'finance_charge_collections_amount',
        'liquidation_principal_amount', 'liquidation_finance_charge_amount',
        'purchase_principal_amount', 'purchase_finance_charge_amount',
        'collection_account_interest_amount', 'simple_interest_advances_amount',
        'reserve_investment_earnings_amount', 'unreimbursed_servicer_advances_amount',
        'transition_expenses_amount', 'indemnity_amounts_amount', 'additional_servicing_fee_amount',
    ] -%}
        {%- do fields.append(to_cents(relation ~ '.' ~ amount)) -%}
    {%- endfor -%}
    concat_ws('|'
    {%- for value in fields %}, coalesce(cast({{ value }} as string), ''){% endfor -%}
    )
{%- endmacro %}

{#- Each trust's first Distribution Date that an incremental build computes again (DuckDB): the
    first date of `stored` (the model's rows) whose period inputs are not those it was computed
    with, or that has none now, or the first date of `period_inputs` with nothing stored. The
    dates before it were computed from the same inputs, each from the one before, so they are
    what a build of every date gives; every date from it on is computed again. -#}
{% macro waterfall_recompute_from(stored, period_inputs) -%}
    select
        deal_id,
        min(period_number) as period_number
    from (
        select
            stored.deal_id,
            stored.period_number
        from {{ stored }} as stored
        left join {{ period_inputs }} as inputs
            on stored.deal_id = inputs.deal_id and stored.period_number = inputs.period_number
        where
            inputs.deal_id is null
            or {{ json_text('stored.amounts', '$.inputs') }} is distinct from {{ waterfall_inputs_text('inputs') }}
        union all
        select
            inputs.deal_id,
            inputs.period_number
        from {{ period_inputs }} as inputs
        where not exists (
            select 1 from {{ stored }} as stored
            where stored.deal_id = inputs.deal_id and stored.period_number = inputs.period_number
        )
    ) as changed
    group by deal_id
{%- endmacro %}

{#- The state before the first Distribution Date computed, one row per class. -#}
{% macro waterfall_opening_state(keys) %}
    select
        {% for key in keys %}opening.{{ key }}, {% endfor %}
        opening.period_number,
        opening.class_id,
        {{ to_cents('opening.note_balance') }} as balance_end_cents,
        {{ to_cents('opening.unpaid_interest_amount') }} as unpaid_monthly_interest_end_cents,
        0::{{ cents_type() }} as unpaid_other_interest_end_cents,
        {{ to_cents('opening.reserve_account_balance') }} as reserve_balance_end_cents,
        {{ to_cents('opening.servicing_fee_unpaid_amount') }} as servicing_fee_unpaid_end_cents,
        0::{{ cents_type() }} as advances_unpaid_end_cents,
        0::{{ cents_type() }} as transition_unpaid_end_cents,
        0::{{ cents_type() }} as indemnity_unpaid_end_cents,
        0::{{ cents_type() }} as additional_fee_unpaid_end_cents,
        0::{{ cents_type() }} as capped_paid_to_date_end_cents,
        null::{{ json_type() }} as amounts
    from opening
{%- endmacro %}

{#- One Distribution Date of every waterfall whose state is `previous` (a relation or subquery, one
    row per class): CTEs ending in `next_state`, the state after the date with its amounts. -#}
{% macro waterfall_next_date(previous, keys) %}
        {%- set key_list = keys | join(', ') %}
        {#- the waterfall's state after a date, and its name on the next date -#}
        {%- set waterfall_state = [
            ('reserve_balance_end_cents', 'reserve_beginning_cents'),
            ('servicing_fee_unpaid_end_cents', 'servicing_fee_unpaid_prior_cents'),
            ('advances_unpaid_end_cents', 'advances_unpaid_prior_cents'),
            ('transition_unpaid_end_cents', 'transition_unpaid_prior_cents'),
            ('indemnity_unpaid_end_cents', 'indemnity_unpaid_prior_cents'),
            ('additional_fee_unpaid_end_cents', 'additional_fee_unpaid_prior_cents'),
            ('capped_paid_to_date_end_cents', 'capped_paid_to_date_cents'),
        ] %}
        previous as (
            select * from {{ previous }}
        ),

        class_periods as (
            -- each class on the next Distribution Date, with the pool figures of that date
            select
                {% for key in keys %}previous.{{ key }}, {% endfor %}
                inputs.period_number,
                inputs.distribution_date,
                previous.class_id,
                classes.class_order,
                classes.class_tier,
                classes.principal_order,
                classes.final_distribution_date,
                {{ to_cents('classes.initial_balance') }} as initial_cents,
                -- Art. I "Class ... Rate": fixed, or the floating index for the accrual period
                -- plus the spread, in billionths
                (
                    case
                        when classes.rate_type = 'floating' then inputs.index_rate + classes.floating_spread
                        else classes.fixed_rate
                    end * 1000000000
                )::{{ cents_type() }} as note_rate_nanos,
                -- Art. I "Monthly Interest": actual/360 from the previous Distribution Date,
                -- or one-twelfth (30/360)
                case
                    when classes.day_count = 'actual/360' then inputs.actual_accrual_days
                    else inputs.thirty_360_accrual_days
                end as accrual_days,
                case
                    when inputs.period_number = 1 then {{ to_cents('classes.first_period_interest_amount') }}
                end as first_period_interest_cents,
                previous.balance_end_cents as balance_begin_cents,
                previous.unpaid_monthly_interest_end_cents as unpaid_monthly_interest_begin_cents,
                previous.unpaid_other_interest_end_cents as unpaid_other_interest_begin_cents,
                -- the waterfall's own state, the same on each of its classes
                {%- for state, prior in waterfall_state %}
                previous.{{ state }} as {{ prior }}{{ ',' if not loop.last }}
                {%- endfor %}
            from previous
            inner join inputs
                on {{ same_keys('previous', 'inputs', keys) }} and inputs.period_number = previous.period_number + 1
            inner join classes
                on previous.deal_id = classes.deal_id and previous.class_id = classes.class_id
        ),

        class_interest as (
            select
                *,
                -- Art. I "Monthly Interest" on the balance after the previous date's principal
                -- (the initial Distribution Date: the amount Art. I fixes)
                coalesce(
                    first_period_interest_cents,
                    {{ div_half_up('balance_begin_cents * note_rate_nanos * accrual_days', '360000000000') }}
                ) as monthly_interest_cents,
                -- Art. I "Additional Note Interest": (i) interest unpaid on earlier dates, and
                -- (ii) interest at the Note Rate on the unpaid Monthly Note Interest only
                unpaid_monthly_interest_begin_cents + unpaid_other_interest_begin_cents
                    as additional_interest_cents,
                {{ div_half_up('unpaid_monthly_interest_begin_cents * note_rate_nanos * accrual_days', '360000000000') }}
                    as interest_on_additional_cents
            from class_periods
        ),

        class_tiers as (
            select
                *,
                -- Art. I "Total Note Interest"
                monthly_interest_cents + additional_interest_cents + interest_on_additional_cents
                    as total_interest_cents,
                -- the balance of this class and the classes of its tier paid before it
                sum(balance_begin_cents) over (
                    partition by {{ key_list }}, class_tier order by principal_order
                    range between unbounded preceding and current row
                ) as tier_balance_through_cents
            from class_interest
        ),

        deal_dues as (
            -- one row per waterfall and Distribution Date
            select
                {% for key in keys %}class_tiers.{{ key }}, {% endfor %}
                class_tiers.period_number,
                any_value(class_tiers.distribution_date) as distribution_date,
                sum(class_tiers.balance_begin_cents) as note_balance_before_cents,
                {% for tier in ['a', 'b', 'c', 'd'] %}
                    coalesce(sum(class_tiers.total_interest_cents) filter (where class_tiers.class_tier = '{{ tier | upper }}'), 0)
                        as interest_due_{{ tier }}_cents,
                    -- the balance of this tier and the tiers senior to it, the day before
                    coalesce(sum(class_tiers.balance_begin_cents) filter (where class_tiers.class_tier <= '{{ tier | upper }}'), 0)
                        as cumulative_balance_{{ tier }}_cents,
                    -- Art. I: on or after a Class Final Distribution Date, the outstanding
                    -- balance of such Class (and the classes of its tier ahead of it)
                    coalesce(max(class_tiers.tier_balance_through_cents) filter (
                        where class_tiers.class_tier = '{{ tier | upper }}'
                        and class_tiers.final_distribution_date <= class_tiers.distribution_date
                    ), 0) as final_date_balance_{{ tier }}_cents,
                {% endfor %}
                {%- for _state, prior in waterfall_state %}
                any_value(class_tiers.{{ prior }}) as {{ prior }}{{ ',' if not loop.last }}
                {%- endfor %}
            from class_tiers
            group by {% for key in keys %}class_tiers.{{ key }}, {% endfor %}class_tiers.period_number
        ),

        fees_due as (
            select
                deal_dues.*,
                {{ to_cents('inputs.beginning_pool_balance') }} as beginning_pool_cents,
                {{ to_cents('inputs.ending_pool_balance') }} as ending_pool_cents,
                {{ to_cents('inputs.overcollateralization_target_amount') }} as overcollateralization_target_cents,
                {{ to_cents('coalesce(inputs.reserve_investment_earnings_amount, 0)') }} as reserve_earnings_cents,
                -- Art. I "Available Collections" (Exhibit A line 22 = 17d + 18d + 20 + 21)
                {{ to_cents('inputs.finance_charge_collections_amount + inputs.liquidation_finance_charge_amount
                    + inputs.purchase_finance_charge_amount + inputs.principal_collections_amount
                    + inputs.liquidation_principal_amount + inputs.purchase_principal_amount
                    + coalesce(inputs.collection_account_interest_amount, 0)
                    + coalesce(inputs.simple_interest_advances_amount, 0)') }} as available_collections_cents,
                -- 3.8: one-twelfth of the Servicing Rate times the Pool Balance at the start of
                -- the Collection Period; Art. I "Total Servicing Fee" adds what is unpaid
                {{ div_half_up(to_cents('inputs.beginning_pool_balance') ~ ' * ' ~ '(deals.servicing_rate * 1000000000)::' ~ cents_type(), '12000000000') }}
                    as monthly_servicing_fee_cents,
                {{ to_cents('coalesce(inputs.unreimbursed_servicer_advances_amount, 0)') }}
                + deal_dues.advances_unpaid_prior_cents as advances_due_cents,
                {{ to_cents('coalesce(inputs.transition_expenses_amount, 0)') }}
                + deal_dues.transition_unpaid_prior_cents as transition_due_cents,
                {{ to_cents('coalesce(inputs.indemnity_amounts_amount, 0)') }}
                + deal_dues.indemnity_unpaid_prior_cents as indemnity_due_cents,
                {{ to_cents('coalesce(inputs.additional_servicing_fee_amount, 0)') }}
                + deal_dues.additional_fee_unpaid_prior_cents as additional_fee_due_cents,
                {{ to_cents('deals.successor_transition_cap_amount') }} as transition_cap_cents,
                {{ to_cents('deals.specified_reserve_amount') }} as specified_reserve_cents
            from deal_dues
            inner join inputs
                on {{ same_keys('deal_dues', 'inputs', keys) }} and deal_dues.period_number = inputs.period_number
            inner join deals on deal_dues.deal_id = deals.deal_id
        ),

        principal_due as (
            select
                *,
                monthly_servicing_fee_cents + servicing_fee_unpaid_prior_cents as total_servicing_fee_cents,
                -- Exhibit A line 28: transition expenses and indemnities up to what is left of the cap
                least(
                    transition_due_cents + indemnity_due_cents,
                    greatest(transition_cap_cents - capped_paid_to_date_cents, 0)
                ) as capped_transition_due_cents,
                -- Art. I "Priority Principal Distributable Amount"
                greatest(
                    greatest(cumulative_balance_a_cents - ending_pool_cents, 0), final_date_balance_a_cents
                ) as priority_principal_cents
            from fees_due
        ),

        secondary_due as (
            -- Art. I "Secondary Principal Distributable Amount"
            select
                *,
                greatest(
                    greatest(greatest(cumulative_balance_b_cents - ending_pool_cents, 0) - priority_principal_cents, 0),
                    final_date_balance_b_cents
                ) as secondary_principal_cents
            from principal_due
        ),

        tertiary_due as (
            -- Art. I "Tertiary Principal Distributable Amount"
            select
                *,
                greatest(
                    greatest(
                        greatest(cumulative_balance_c_cents - ending_pool_cents, 0)
                        - priority_principal_cents - secondary_principal_cents, 0
                    ),
                    final_date_balance_c_cents
                ) as tertiary_principal_cents
            from secondary_due
        ),

        quaternary_due as (
            -- Art. I "Quaternary Principal Distributable Amount"
            select
                *,
                greatest(
                    greatest(
                        greatest(cumulative_balance_d_cents - ending_pool_cents, 0)
                        - priority_principal_cents - secondary_principal_cents - tertiary_principal_cents, 0
                    ),
                    final_date_balance_d_cents
                ) as quaternary_principal_cents
            from tertiary_due
        ),

        regular_due as (
            select
                *,
                priority_principal_cents + secondary_principal_cents + tertiary_principal_cents
                + quaternary_principal_cents as tiered_principal_cents,
                -- Art. I "Regular Principal Distributable Amount": the lesser of the Note Balance
                -- and (Note Balance + Overcollateralization Target - Pool Balance) less the
                -- tiered amounts
                greatest(
                    least(
                        note_balance_before_cents,
                        greatest(note_balance_before_cents + overcollateralization_target_cents - ending_pool_cents, 0)
                        - (priority_principal_cents + secondary_principal_cents + tertiary_principal_cents
                            + quaternary_principal_cents)
                    ),
                    0
                ) as regular_principal_cents,
                interest_due_a_cents + interest_due_b_cents + interest_due_c_cents + interest_due_d_cents
                    as interest_due_cents
            from quaternary_due
        ),

        reserve_draw as (
            select
                *,
                -- 4.6(a): the Required Payment Amount (Exhibit A line 37)
                total_servicing_fee_cents + advances_due_cents + capped_transition_due_cents
                + interest_due_cents + tiered_principal_cents as required_payment_cents,
                reserve_beginning_cents + reserve_earnings_cents as reserve_account_amount_cents,
                -- 4.1(d): the Collection Account and the Reserve Account cover the Note Balance,
                -- Total Note Interest, the Total Servicing Fee and Unreimbursed Servicer Advances:
                -- the whole Reserve Account joins Available Funds
                available_collections_cents + reserve_beginning_cents + reserve_earnings_cents
                >= note_balance_before_cents + interest_due_cents + total_servicing_fee_cents
                + advances_due_cents as is_reserve_released_in_full
            from regular_due
        ),

        available_funds as (
            select
                *,
                -- 4.6(b): the Reserve Account Draw Amount covers the Required Payment Amount's
                -- shortfall; all of it under 4.1(d) or once the Pool Balance is zero
                case
                    when is_reserve_released_in_full or ending_pool_cents = 0 then reserve_account_amount_cents
                    else least(greatest(required_payment_cents - available_collections_cents, 0), reserve_account_amount_cents)
                end as reserve_draw_cents
            from reserve_draw
        ),

        funds as (
            select
                *,
                -- Art. I "Available Funds"
                available_collections_cents + reserve_draw_cents as available_funds_cents,
                reserve_account_amount_cents - reserve_draw_cents as reserve_after_draw_cents,
                -- never below zero: the Regular Principal Distributable Amount, literally read,
                -- can exceed what the notes owe after the tiered amounts
                greatest(note_balance_before_cents - tiered_principal_cents - regular_principal_cents, 0)
                    as note_balance_after_principal_due_cents
            from available_funds
        ),

        reserve_target as (
            -- Art. I "Required Reserve Account Amount": the specified amount, at most the Note
            -- Balance after the day's principal payments; $0 when the Pool Balance is zero or
            -- under 4.1(d). The deposit of 2.8(a) and the release of 4.7(d) measure it before
            -- principal is paid, on the Note Balance after the principal due (measured on the
            -- principal paid it would depend on the deposit that precedes principal);
            -- fct_distribution_date prints the definition's amount on the payments made
            select
                *,
                case
                    when is_reserve_released_in_full or ending_pool_cents = 0 then 0
                    else least(specified_reserve_cents, note_balance_after_principal_due_cents)
                end as required_reserve_cents
            from funds
        ),

        payments as (
            {{ priority_of_payments('reserve_target', 'steps', keys) }}
        ),

        class_shares as (
            -- Indenture 2.8(a): each tier's interest paid to its classes pro rata to their Total
            -- Note Interest; 2.8(d): principal sequential by principal order, classes sharing an
            -- order (A-2a, A-2b) pro rata to their balances. Shares round half up and the last
            -- class of a group takes the remainder.
            select
                class_tiers.*,
                case class_tiers.class_tier
                    when 'A' then payments.class_a_interest_paid_cents
                    when 'B' then payments.class_b_interest_paid_cents
                    when 'C' then payments.class_c_interest_paid_cents
                    else payments.class_d_interest_paid_cents
                end as tier_interest_paid_cents,
                sum(class_tiers.total_interest_cents) over same_tier as tier_interest_due_cents,
                class_tiers.class_order = max(class_tiers.class_order) over same_tier as is_last_in_tier,
                least(
                    sum(class_tiers.balance_begin_cents) over same_order,
                    greatest(
                        payments.principal_paid_cents
                        - coalesce(sum(class_tiers.balance_begin_cents) over orders_ahead, 0),
                        0
                    )
                ) as order_principal_paid_cents,
                sum(class_tiers.balance_begin_cents) over same_order as order_balance_cents,
                class_tiers.class_order = max(class_tiers.class_order) over same_order as is_last_in_order
                {%- if carries_rows() %},
                -- every amount of the waterfall's date, carried to its classes for next_state
                {{ row_record('payments') }} as deal
                {%- endif %}
            from class_tiers
            inner join payments
                on {{ same_keys('class_tiers', 'payments', keys) }} and class_tiers.period_number = payments.period_number
            window
                same_tier as (partition by {% for key in keys %}class_tiers.{{ key }}, {% endfor %}class_tiers.class_tier),
                same_order as (partition by {% for key in keys %}class_tiers.{{ key }}, {% endfor %}class_tiers.principal_order),
                orders_ahead as (
                    partition by {% for key in keys %}class_tiers.{{ key }}{{ ', ' if not loop.last }}{% endfor %}
                    order by class_tiers.principal_order
                    range between unbounded preceding and 1 preceding
                )
        ),

        class_pro_rata as (
            select
                *,
                case
                    when tier_interest_paid_cents = tier_interest_due_cents then total_interest_cents
                    else {{ div_half_up('tier_interest_paid_cents * total_interest_cents', 'greatest(tier_interest_due_cents, 1)') }}
                end as interest_share_cents,
                case
                    when order_principal_paid_cents = order_balance_cents then balance_begin_cents
                    else {{ div_half_up('order_principal_paid_cents * balance_begin_cents', 'greatest(order_balance_cents, 1)') }}
                end as principal_share_cents
            from class_shares
        ),

        class_payments as (
            select
                *,
                case
                    when is_last_in_tier
                        then tier_interest_paid_cents - ((sum(interest_share_cents) over same_tier) - interest_share_cents)
                    else interest_share_cents
                end as interest_paid_cents,
                case
                    when is_last_in_order
                        then order_principal_paid_cents - ((sum(principal_share_cents) over same_order) - principal_share_cents)
                    else principal_share_cents
                end as principal_paid_cents
            from class_pro_rata
            window
                same_tier as (partition by {{ key_list }}, class_tier),
                same_order as (partition by {{ key_list }}, principal_order)
        ),

        class_interest_unpaid as (
            -- interest paid goes to the oldest amounts first: Additional Note Interest, then
            -- interest on it, then the Monthly Interest; what stays unpaid of the Monthly Note
            -- Interest earns interest next time (Art. I "Additional Note Interest" (ii))
            select
                *,
                least(interest_paid_cents, unpaid_monthly_interest_begin_cents) as paid_to_unpaid_monthly_cents,
                least(
                    greatest(interest_paid_cents - unpaid_monthly_interest_begin_cents, 0),
                    unpaid_other_interest_begin_cents + interest_on_additional_cents
                ) as paid_to_other_cents
            from class_payments
        ),

        {#- the amounts of the waterfall's date: carried on its classes, or read again -#}
        {%- set deal = 'class_interest_unpaid.deal' if carries_rows() else 'payments' %}
        next_state as (
            select
                {% for key in keys %}class_interest_unpaid.{{ key }}, {% endfor %}
                class_interest_unpaid.period_number,
                class_interest_unpaid.class_id,
                class_interest_unpaid.balance_begin_cents - class_interest_unpaid.principal_paid_cents
                    as balance_end_cents,
                class_interest_unpaid.unpaid_monthly_interest_begin_cents
                - class_interest_unpaid.paid_to_unpaid_monthly_cents
                + class_interest_unpaid.monthly_interest_cents
                - (class_interest_unpaid.interest_paid_cents - class_interest_unpaid.paid_to_unpaid_monthly_cents
                    - class_interest_unpaid.paid_to_other_cents) as unpaid_monthly_interest_end_cents,
                class_interest_unpaid.unpaid_other_interest_begin_cents
                + class_interest_unpaid.interest_on_additional_cents
                - class_interest_unpaid.paid_to_other_cents as unpaid_other_interest_end_cents,
                {{ deal }}.reserve_balance_end_cents,
                {{ deal }}.total_servicing_fee_cents - {{ deal }}.servicing_fee_paid_cents
                    as servicing_fee_unpaid_end_cents,
                {{ deal }}.advances_due_cents - {{ deal }}.unreimbursed_servicer_advances_paid_cents
                    as advances_unpaid_end_cents,
                {{ deal }}.transition_unpaid_end_cents,
                {{ deal }}.indemnity_unpaid_end_cents,
                {{ deal }}.additional_fee_unpaid_end_cents,
                {{ deal }}.capped_paid_to_date_cents
                + {{ deal }}.capped_successor_servicer_amounts_paid_cents as capped_paid_to_date_end_cents,
                -- every amount of the date, for the marts (the state above is what recurs)
                {%- set class_amounts = {} %}
                {%- for column in [
                    'class_order', 'note_rate_nanos', 'accrual_days', 'balance_begin_cents',
                    'monthly_interest_cents', 'additional_interest_cents', 'interest_on_additional_cents',
                    'total_interest_cents', 'interest_paid_cents', 'principal_paid_cents', 'initial_cents'
                ] %}
                    {%- do class_amounts.update({column: 'class_interest_unpaid.' ~ column}) %}
                {%- endfor %}
                to_json({{ record({
                    'class': record(class_amounts),
                    'deal': deal,
                    'inputs': waterfall_inputs_text('date_inputs'),
                }) }}) as amounts
            from class_interest_unpaid
            {%- if not carries_rows() %}
            inner join payments
                on {{ same_keys('class_interest_unpaid', 'payments', keys) }}
                and class_interest_unpaid.period_number = payments.period_number
            {%- endif %}
            inner join inputs as date_inputs
                on {{ same_keys('class_interest_unpaid', 'date_inputs', keys) }}
                and class_interest_unpaid.period_number = date_inputs.period_number
        )

{%- endmacro %}


{#-
    The priority of payments of one Distribution Date of every waterfall in `dues` (one row per
    waterfall and date, with the amounts due and the Required Reserve Account Amount), in the
    order of the seed `steps`: each step pays the lesser of what it is due and what is left of its
    source (Available Funds under Indenture 2.8(a), then the Reserve Account's excess over the
    Required Reserve Account Amount under SSA 4.7(d)). Since every step pays all it is due or
    all that is left, what is left before a step is its source less the dues of the steps before
    it (never less than zero): one window over the steps. A step with no amount due takes what
    is left (Excess Collections, the Certificateholder's release).
    Returns `dues` with each step's `<step>_paid_cents`, the steps as `payment_steps` (a list of
    step_order, step, funded_from, due, paid, left), the principal paid and the ending state.
-#}
{% macro priority_of_payments(dues, steps, keys) %}
    {%- set available_funds_steps = [
        ('servicing_fee', 'total_servicing_fee_cents'),
        ('unreimbursed_servicer_advances', 'advances_due_cents'),
        ('capped_successor_servicer_amounts', 'capped_transition_due_cents'),
        ('class_a_interest', 'interest_due_a_cents'),
        ('priority_principal', 'priority_principal_cents'),
        ('class_b_interest', 'interest_due_b_cents'),
        ('secondary_principal', 'secondary_principal_cents'),
        ('class_c_interest', 'interest_due_c_cents'),
        ('tertiary_principal', 'tertiary_principal_cents'),
        ('class_d_interest', 'interest_due_d_cents'),
        ('quaternary_principal', 'quaternary_principal_cents'),
        ('reserve_account_deficiency', 'reserve_deficiency_cents'),
        ('regular_principal', 'regular_principal_payable_cents'),
        ('remaining_transition_expenses', 'transition_after_cap_cents'),
        ('additional_servicing_fee', 'additional_fee_due_cents'),
        ('remaining_indemnity_amounts', 'indemnity_after_cap_cents'),
        ('excess_collections', 'null'),
    ] -%}
    {%- set reserve_excess_steps = [
        ('reserve_excess_to_principal', 'regular_principal_payable_cents - regular_principal_paid_cents'),
        ('reserve_excess_to_successor_servicer',
            'transition_after_cap_cents - remaining_transition_expenses_paid_cents'
            ~ ' + additional_fee_due_cents - additional_servicing_fee_paid_cents'),
        ('reserve_excess_to_certificateholder', 'null'),
    ] -%}
    {%- set group_keys -%}{% for key in keys %}{{ key }}, {% endfor %}period_number{%- endset -%}
    with

    due_amounts as (
        select
            *,
            -- 4.6(b) "Reserve Account Deficiency": what the Reserve Account lacks after the draw
            greatest(required_reserve_cents - reserve_after_draw_cents, 0) as reserve_deficiency_cents,
            -- Exhibit A line 28 pays transition expenses first, then indemnities; lines 40 and 42
            -- are what the cap left of each
            transition_due_cents - least(capped_transition_due_cents, transition_due_cents) as transition_after_cap_cents,
            indemnity_due_cents - (capped_transition_due_cents - least(capped_transition_due_cents, transition_due_cents))
                as indemnity_after_cap_cents,
            -- 4.7(d): the Reserve Account Amount after the draw beyond the Required Reserve
            -- Account Amount
            greatest(reserve_after_draw_cents - required_reserve_cents, 0) as reserve_excess_cents,
            -- what of the Regular Principal Distributable Amount the notes can take: 2.8(d) pays
            -- each class until it is paid in full, and the amount can exceed the notes left after
            -- the tiered amounts (a pool that pays off leaves the target of Art. I's (ii))
            least(regular_principal_cents, note_balance_before_cents - tiered_principal_cents)
                as regular_principal_payable_cents
        from {{ dues }}
    ),

    {#- each source pays its steps in the seed's order, the Reserve Account's excess after
        Available Funds (its dues read what Available Funds paid) -#}
    {%- set sources = [
        ('available_funds', 'available_funds_cents', available_funds_steps),
        ('reserve_excess', 'reserve_excess_cents', reserve_excess_steps),
    ] %}
    {%- for source, funds, source_steps in sources %}
    {%- set before = 'due_amounts' if loop.first else 'after_' ~ sources[loop.index0 - 1][0] %}

    {{ source }}_dues as (
        select
            {% if carries_rows() %}{{ before }}.*{% else %}{{ group_keys }}{% endif %},
            {{ funds }} as source_cents,
            {%- set due_steps = [] %}
            {%- for step, due in source_steps %}
                {%- do due_steps.append(record({'step': "'" ~ step ~ "'", 'due': '(' ~ due ~ ')::' ~ cents_type()})) %}
            {%- endfor %}
            {{ unnest_list(due_steps) }} as due_step
        from {{ before }}
    ),

    {{ source }}_paid as (
        {{ pay_in_order(source ~ '_dues', steps, source, group_keys) }}
    ),

    {%- set paid_columns = [] %}
    {%- set paid_aggregates %}
        {%- for step, _due in source_steps %}
            {%- do paid_columns.append(step ~ '_paid_cents') %}
            max(paid.paid_cents) filter (where paid.step = '{{ step }}') as {{ step }}_paid_cents,
        {%- endfor %}
        {%- do paid_columns.append(source ~ '_steps') %}
            {{ ordered_list('paid.payment_step', 'paid.step_order') }} as {{ source }}_steps
    {%- endset %}

    after_{{ source }} as (
        -- back to one row per waterfall and date
        {%- if carries_rows() %}
        select
            {{ star_except(pay_in_order_columns(), 'paid') }},
            {{ paid_aggregates }}
        from {{ source }}_paid as paid
        group by all
        {%- else %}
        select
            {{ before }}.*,
            {%- for column in paid_columns %}
            paid.{{ column }}{{ ',' if not loop.last }}
            {%- endfor %}
        from {{ before }}
        inner join (
            select
                {{ group_keys }},
                {{ paid_aggregates }}
            from {{ source }}_paid as paid
            group by {{ group_keys }}
        ) as paid
            on {{ same_keys(before, 'paid', keys) }} and {{ before }}.period_number = paid.period_number
        {%- endif %}
    ){{ ',' if not loop.last }}
    {%- endfor %}

    select
        {{ star_except(['available_funds_steps', 'reserve_excess_steps']) }},
        {{ list_concat('available_funds_steps', 'reserve_excess_steps') }} as payment_steps,
        priority_principal_paid_cents + secondary_principal_paid_cents + tertiary_principal_paid_cents
        + quaternary_principal_paid_cents + regular_principal_paid_cents + reserve_excess_to_principal_paid_cents
            as principal_paid_cents,
        reserve_after_draw_cents + reserve_account_deficiency_paid_cents - reserve_excess_cents
            as reserve_balance_end_cents,
        transition_after_cap_cents - remaining_transition_expenses_paid_cents
        - least(reserve_excess_to_successor_servicer_paid_cents, transition_after_cap_cents - remaining_transition_expenses_paid_cents)
            as transition_unpaid_end_cents,
        indemnity_after_cap_cents - remaining_indemnity_amounts_paid_cents as indemnity_unpaid_end_cents,
        additional_fee_due_cents - additional_servicing_fee_paid_cents
        - (reserve_excess_to_successor_servicer_paid_cents
            - least(reserve_excess_to_successor_servicer_paid_cents, transition_after_cap_cents - remaining_transition_expenses_paid_cents))
            as additional_fee_unpaid_end_cents
    from after_reserve_excess
{% endmacro %}


{#- Each step of `dues` (rows of a waterfall's date with its source_cents and one due_step) paid in
    the seed's order of the steps funded from `source`: the rows of `dues` with the columns of
    pay_in_order_columns(). -#}
{% macro pay_in_order(dues, steps, source, group_keys) %}
    select
        ordered.*,
        {{ record({
            'step_order': 'ordered.step_order',
            'step': 'ordered.step',
            'funded_from': "'" ~ source ~ "'",
            'due_cents': 'coalesce(ordered.due_cents, ordered.paid_cents)',
            'paid_cents': 'ordered.paid_cents',
            'left_cents': 'ordered.source_cents - ordered.paid_cents - ordered.paid_before_cents'
        }) }} as payment_step
    from (
        select
            *,
            least(coalesce(due_cents, left_before_cents), left_before_cents) as paid_cents,
            source_cents - left_before_cents as paid_before_cents
        from (
            select
                {{ dues }}.*,
                {{ dues }}.due_step.step as step,
                {{ dues }}.due_step.due as due_cents,
                {{ steps }}.step_order,
                greatest(
                    {{ dues }}.source_cents - coalesce(sum({{ dues }}.due_step.due) over (
                        partition by {{ group_keys }} order by {{ steps }}.step_order
                        rows between unbounded preceding and 1 preceding
                    ), 0),
                    0
                ) as left_before_cents
            from {{ dues }}
            inner join {{ steps }}
                on {{ dues }}.due_step.step = {{ steps }}.step and {{ steps }}.funded_from = '{{ source }}'
        ) as with_left
    ) as ordered
{% endmacro %}

{% macro pay_in_order_columns() -%}
    {{ return(['source_cents', 'due_step', 'step', 'due_cents', 'step_order', 'left_before_cents',
        'paid_cents', 'paid_before_cents', 'payment_step']) }}
{%- endmacro %}
