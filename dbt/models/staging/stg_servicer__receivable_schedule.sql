-- Obligor personal data stops here: the name is replaced by a one-way hash (to link records of
-- the same obligor without identifying them) and the street address is dropped.
with

source as (
    select * from {{ source('raw', 'receivable_schedule') }}
),

renamed as (
    select
        -- ids
        deal_id,
        receivable_id,
        {{ sha256_hex("coalesce(upper(trim(obligor_name)), '')") }} as obligor_key,
        -- attributes
        vehicle_new_used,
        vehicle_new_used = 'new' as is_new_vehicle,
        vehicle_model_year,
        vehicle_make,
        obligor_state,
        obligor_credit_score,
        original_term as original_term_months,
        remaining_term as remaining_term_months,
        days_past_due as cutoff_days_past_due,
        payments_made as cutoff_payments_made,
        interest_calculation_method,
        apr::decimal(8, 6) as apr,
        -- amounts
        amount_financed::decimal(18, 2) as amount_financed_amount,
        scheduled_payment::decimal(18, 2) as scheduled_payment_amount,
        principal_balance::decimal(18, 2) as cutoff_principal_balance,
        -- dates
        origination_date,
        first_payment_date,
        maturity_date,
        last_payment_date as cutoff_last_payment_date,
        -- flags
        is_bankrupt,
        is_repossessed,
        is_government_obligor
    from source
)

select * from renamed
