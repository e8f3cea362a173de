-- One row per trust, Distribution Date and class: interest accrued and paid, principal paid,
-- balances and Note Pool Factors (Art. I: seven digits, after the day's principal payments).
with

waterfall as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
),

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

class_amounts as (
    select
        deal_id,
        period_number,
        class_id,
        {{ json_text('amounts', '$.class.note_rate_nanos') }}::{{ cents_type() }} as note_rate_nanos,
        {{ json_text('amounts', '$.class.balance_begin_cents') }}::{{ cents_type() }} as balance_begin_cents,
        balance_end_cents,
        {{ json_text('amounts', '$.class.initial_cents') }}::{{ cents_type() }} as initial_cents,
        {{ waterfall_amount('monthly_interest_cents', 'class') }} as monthly_interest_amount,
        {{ waterfall_amount('additional_interest_cents', 'class') }} as additional_note_interest_amount,
        {{ waterfall_amount('interest_on_additional_cents', 'class') }} as interest_on_additional_interest_amount,
        {{ waterfall_amount('total_interest_cents', 'class') }} as total_note_interest_amount,
        {{ waterfall_amount('interest_paid_cents', 'class') }} as interest_paid_amount,
        {{ waterfall_amount('principal_paid_cents', 'class') }} as principal_paid_amount,
        {{ from_cents('unpaid_monthly_interest_end_cents + unpaid_other_interest_end_cents') }}
            as interest_shortfall_amount
    from waterfall
),

final as (
    select
        -- ids
        class_amounts.deal_id,
        class_amounts.period_number,
        class_amounts.class_id,
        -- attributes
        classes.class_order,
        classes.class_label,
        -- dates
        calendar.distribution_date,
        -- rates
        {{ scaled('class_amounts.note_rate_nanos', 9) }}::decimal(12, 9) as note_rate,
        -- amounts
        {{ from_cents('class_amounts.balance_begin_cents') }} as beginning_balance,
        class_amounts.monthly_interest_amount,
        class_amounts.additional_note_interest_amount,
        class_amounts.interest_on_additional_interest_amount,
        class_amounts.total_note_interest_amount,
        class_amounts.interest_paid_amount,
        class_amounts.interest_shortfall_amount,
        class_amounts.principal_paid_amount,
        class_amounts.interest_paid_amount + class_amounts.principal_paid_amount as total_distribution_amount,
        {{ from_cents('class_amounts.balance_end_cents') }} as ending_balance,
        {{ factor_7('class_amounts.balance_begin_cents', 'class_amounts.initial_cents') }} as beginning_pool_factor,
        {{ factor_7('class_amounts.balance_end_cents', 'class_amounts.initial_cents') }} as pool_factor,
        -- flags: a class reached its Class Final Distribution Date with principal left unpaid
        calendar.distribution_date >= classes.final_distribution_date
        and class_amounts.balance_end_cents > 0 as is_unpaid_after_final_date
    from class_amounts
    inner join classes on class_amounts.deal_id = classes.deal_id and class_amounts.class_id = classes.class_id
    inner join calendar
        on class_amounts.deal_id = calendar.deal_id and class_amounts.period_number = calendar.period_number
)

select * from final
