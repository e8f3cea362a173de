-- The Monthly Servicer's Certificate (Exhibit A): one row per Distribution Date and line, every
-- line of the form for every date. Line ids and labels come from raw.certificate_layout (built
-- for the deal's classes by dagster_project/certificate_layout.py); the models fill the keys.
-- `value` is printed as the certificate prints it (no $ or commas); `amount` is the number.
with

dates as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
),

inputs as (
    select * from {{ ref('int_waterfall__period_inputs') }}
),

notes as (
    select * from {{ ref('fct_note_distribution') }}
),

layout as (
    select * from {{ source('raw', 'certificate_layout') }}
),

terms as (
    select * from {{ ref('stg_deal__terms') }}
),

net_worth_minimum as (
    select term_value::decimal(18, 2) as minimum_amount
    from terms
    where term_name = 'tangible_net_worth_minimum'
),

scalar_lines as (
    select
        dates.distribution_date,
        -- lines 1-7
        inputs.beginning_pool_balance,
        inputs.principal_collections_amount,
        inputs.purchase_principal_amount,
        inputs.defaulted_receivables_amount,
        inputs.ending_pool_balance,
        inputs.receivables_outstanding,
        inputs.initial_pool_balance,
        -- lines 10-16
        {{ from_cents('dates.overcollateralization_target_cents') }} as overcollateralization_target_amount,
        {{ from_cents('dates.ending_pool_cents - dates.note_balance_after') }} as overcollateralization_amount,
        inputs.weighted_average_coupon_percent,
        inputs.weighted_average_original_term,
        inputs.weighted_average_remaining_term,
        inputs.libor_rate * 100 as libor_rate,
        (inputs.libor_rate + (select max(floating_spread) from {{ ref('stg_deal__classes') }})) * 100
            as floating_note_rate,
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
        + inputs.liquidation_principal_amount + inputs.purchase_principal_amount
            as total_collections_amount,
        coalesce(inputs.collection_account_interest_amount, 0) as collection_account_interest_amount,
        coalesce(inputs.simple_interest_advances_amount, 0) as simple_interest_advances_amount,
        {{ from_cents('dates.available_collections_cents') }} as available_collections_amount,
        {{ from_cents('dates.reserve_draw') }} as reserve_account_draw_amount,
        {{ from_cents('dates.available_funds') }} as available_funds_amount,
        -- lines 26-42
        {{ from_cents('dates.monthly_servicing_fee') }} as monthly_servicing_fee_amount,
        {{ from_cents('dates.servicing_fee_unpaid_prior') }} as servicing_fee_unpaid_prior_amount,
        {{ from_cents('dates.paid_fee') }} as servicing_fee_paid_amount,
        {{ from_cents('dates.total_servicing_fee - dates.paid_fee') }} as servicing_fee_shortfall_amount,
        {{ from_cents('dates.advances_due') }} as unreimbursed_servicer_advances_amount,
        {{ from_cents('dates.capped_transition_due') }} as capped_transition_due_amount,
        {{ from_cents('dates.paid_capped') }} as capped_transition_paid_amount,
        {{ from_cents('dates.capped_transition_due - dates.paid_capped') }} as capped_transition_shortfall_amount,
        {{ from_cents('dates.priority_principal') }} as priority_principal_distributable_amount,
        {{ from_cents('dates.secondary_principal') }} as secondary_principal_distributable_amount,
        {{ from_cents('dates.tertiary_principal') }} as tertiary_principal_distributable_amount,
        {{ from_cents('dates.quaternary_principal') }} as quaternary_principal_distributable_amount,
        {{ from_cents('dates.required_payment_amount') }} as required_payment_amount,
        {{ from_cents('dates.reserve_deficiency') }} as reserve_account_deficiency_amount,
        {{ from_cents('dates.regular_principal') }} as regular_principal_distributable_amount,
        {{ from_cents('dates.paid_transition_rest') }} as remaining_transition_expenses_paid_amount,
        {{ from_cents('dates.paid_additional_fee') }} as additional_servicing_fee_paid_amount,
        {{ from_cents('dates.paid_indemnity_rest') }} as remaining_indemnity_paid_amount,
        -- lines 43-48: account activity (43a carries the Simple Interest Advances of line 21, so
        -- that 43e equals Available Funds)
        inputs.finance_charge_collections_amount + inputs.liquidation_finance_charge_amount
        + inputs.purchase_finance_charge_amount + coalesce(inputs.simple_interest_advances_amount, 0)
            as collection_deposit_finance_charge_amount,
        {{ from_cents('dates.paid_fee + dates.paid_advances + dates.paid_additional_fee') }} as paid_to_servicer_amount,
        {{ from_cents('dates.paid_capped + dates.paid_transition_rest + dates.paid_indemnity_rest') }}
            as paid_to_successor_servicer_amount,
        {{ from_cents('list_sum(dates.interest_paid) + dates.principal_paid_total - dates.reserve_to_principal') }}
            as collection_to_note_payment_amount,
        {{ from_cents('dates.paid_reserve_deposit') }} as reserve_account_deposit_amount,
        {{ from_cents('dates.excess_collections') }} as excess_collections_amount,
        {{ from_cents('dates.available_funds') }} as collection_withdrawals_amount,
        {{ from_cents('list_sum(dates.interest_paid) + dates.principal_paid_total') }} as note_payment_deposits_amount,
        {{ from_cents('list_sum(dates.interest_paid) + dates.principal_paid_total') }} as note_payment_withdrawals_amount,
        {{ from_cents('dates.reserve_to_certificateholder') }} as reserve_released_to_certificateholder_amount,
        {{ from_cents('dates.excess_collections + dates.reserve_to_certificateholder') }}
            as certificate_payment_deposits_amount,
        -- lines 49-59: Required Reserve Account Amount and the Reserve Account
        {{ from_cents('dates.specified_reserve_cents') }} as specified_reserve_account_amount,
        {{ from_cents('dates.note_balance_after_principal_due') }} as note_balance_after_principal_due_amount,
        {{ from_cents('dates.required_reserve') }} as required_reserve_account_amount,
        {{ from_cents('dates.reserve_beginning_balance') }} as reserve_account_beginning_balance,
        {{ from_cents('dates.reserve_earnings_cents') }} as reserve_account_investment_earnings,
        {{ from_cents('dates.reserve_account_amount - dates.reserve_draw') }} as reserve_account_amount_after_draw,
        {{ from_cents('dates.reserve_to_principal') }} as reserve_released_to_principal_amount,
        {{ from_cents('dates.reserve_to_successor_servicer') }} as reserve_released_to_successor_servicer_amount,
        {{ from_cents('dates.reserve_balance_end') }} as reserve_account_ending_balance,
        {{ from_cents('greatest(dates.required_reserve - dates.reserve_balance_end, 0)') }}
            as reserve_account_ending_deficiency_amount,
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
        -- Art. I "Special Unrated Servicer Tangible Net Worth Event" (1 = Yes, the test is met)
        case
            when inputs.tangible_net_worth_amount is null then null
            when inputs.tangible_net_worth_amount >= (select minimum_amount from net_worth_minimum) then 1
            else 0
        end as tangible_net_worth_test
    from dates
    inner join inputs on dates.period_number = inputs.period_number
),

scalar_values as (
    unpivot (
        select
            distribution_date,
            columns(* exclude (distribution_date))::decimal(38, 7)
        from scalar_lines
    )
    on columns(* exclude (distribution_date))
    into name key value amount
),

class_lines as (
    select
        distribution_date,
        class_id,
        beginning_balance as class_balance_begin,
        ending_balance as class_balance_end,
        beginning_pool_factor as class_factor_begin,
        pool_factor as class_factor_end,
        monthly_interest_amount as monthly_interest,
        additional_note_interest_amount as additional_note_interest,
        interest_on_additional_interest_amount as interest_on_additional_interest,
        total_note_interest_amount as total_note_interest,
        interest_paid_amount as interest_paid,
        principal_paid_amount as principal_paid,
        total_distribution_amount as class_distribution
    from notes
),

class_values as (
    select
        distribution_date,
        metric || ':' || class_id as key,
        amount
    from (
        unpivot (
            select
                distribution_date,
                class_id,
                columns(* exclude (distribution_date, class_id))::decimal(38, 7)
            from class_lines
        )
        on columns(* exclude (distribution_date, class_id))
        into name metric value amount
    )
),

total_values as (
    select
        dates.distribution_date,
        unnest([
            'class_balance_begin:total', 'class_balance_end:total',
            'class_factor_begin:total', 'class_factor_end:total'
        ]) as key,
        unnest([
            {{ from_cents('dates.note_balance_before') }}::decimal(38, 7),
            {{ from_cents('dates.note_balance_after') }}::decimal(38, 7),
            {{ factor_7('dates.note_balance_before', 'list_sum(dates.initial_cents)') }}::decimal(38, 7),
            {{ factor_7('dates.note_balance_after', 'list_sum(dates.initial_cents)') }}::decimal(38, 7)
        ]) as amount
    from dates
),

all_values as (
    select * from scalar_values
    union all
    select * from class_values
    union all
    select * from total_values
),

final as (
    select
        dates.distribution_date,
        layout.line_order,
        layout.section,
        layout.line,
        layout.label,
        layout.key,
        layout.kind,
        all_values.amount,
        case layout.kind
            when 'money' then all_values.amount::decimal(18, 2)::varchar
            when 'count' then all_values.amount::bigint::varchar
            when 'factor' then all_values.amount::decimal(12, 7)::varchar
            when 'rate' then all_values.amount::decimal(12, 5)::varchar
            when 'flag' then case all_values.amount when 1 then 'Yes' when 0 then 'No' end
            else all_values.amount::decimal(18, 2)::varchar
        end as value
    from dates
    cross join layout
    left join all_values
        on
            dates.distribution_date = all_values.distribution_date
            and layout.key = all_values.key
)

select
    * exclude (line_order),
    line_order
from final
