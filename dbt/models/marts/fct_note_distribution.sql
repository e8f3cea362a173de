-- One row per Distribution Date and class: interest accrued and paid, principal paid, balances and
-- Note Pool Factors (Art. I: seven digits, after the day's principal payments).
with

dates as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
),

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

per_class as (
    select
        dates.*,
        k.class_index
    from dates
    cross join lateral (select unnest(range(1, len(dates.class_ids) + 1)) as class_index) as k
),

final as (
    select
        per_class.distribution_date,
        per_class.period_number,
        classes.class_id,
        classes.class_order,
        classes.class_label,
        (per_class.rate_nanos[per_class.class_index]::decimal(38, 0) * 0.000000001)::decimal(12, 9) as note_rate,
        {{ from_cents('balances_begin[class_index]') }} as beginning_balance,
        {{ from_cents('monthly_interest[class_index]') }} as monthly_interest_amount,
        {{ from_cents('additional_interest[class_index]') }} as additional_note_interest_amount,
        {{ from_cents('interest_on_additional[class_index]') }} as interest_on_additional_interest_amount,
        {{ from_cents('total_interest[class_index]') }} as total_note_interest_amount,
        {{ from_cents('interest_paid[class_index]') }} as interest_paid_amount,
        {{ from_cents('unpaid_interest_end[class_index]') }} as interest_shortfall_amount,
        {{ from_cents('principal_paid[class_index]') }} as principal_paid_amount,
        {{ from_cents('interest_paid[class_index] + principal_paid[class_index]') }} as total_distribution_amount,
        {{ from_cents('balances_end[class_index]') }} as ending_balance,
        {{ factor_7('balances_begin[class_index]', 'initial_cents[class_index]') }} as beginning_pool_factor,
        {{ factor_7('balances_end[class_index]', 'initial_cents[class_index]') }} as pool_factor,
        -- a class reached its Class Final Distribution Date with principal left unpaid
        per_class.distribution_date >= classes.final_distribution_date
        and per_class.balances_end[per_class.class_index] > 0 as is_unpaid_after_final_date
    from per_class
    inner join classes on per_class.class_index = classes.class_order
)

select * from final
