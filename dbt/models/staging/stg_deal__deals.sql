with

source as (
    select * from {{ source('raw', 'deals') }}
),

renamed as (
    select
        -- ids
        deal_id,
        -- attributes
        trust_name,
        servicer_name,
        overcollateralization_base,
        floating_rate_index,
        has_receivable_count_line,
        defaulted_days_past_due,
        repurchase_cure_days,
        deal_file,
        deal_file_sha256,
        -- amounts and rates
        initial_pool_balance,
        initial_note_balance,
        servicing_rate,
        successor_transition_cap as successor_transition_cap_amount,
        required_reserve_amount as specified_reserve_amount,
        initial_reserve_deposit as initial_reserve_deposit_amount,
        overcollateralization_percent,
        overcollateralization_floor_percent,
        clean_up_call_percent,
        tangible_net_worth_minimum as tangible_net_worth_minimum_amount,
        -- dates
        cutoff_date,
        closing_date,
        first_determination_date,
        first_distribution_date,
        final_scheduled_maturity_date
    from source
)

select * from renamed
