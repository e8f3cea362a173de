-- One row per trust, Distribution Date and step of the priority of payments: Indenture 2.8(a) as
-- Exhibit A lays it out, then the release of any Reserve Account excess (SSA 4.7(d)), in the
-- order of the seed priority_of_payments. Amount due, amount paid, shortfall, and the funds of
-- the step's source left after it.
with

waterfall as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
),

steps as (
    select * from {{ ref('priority_of_payments') }}
),

layout as (
    select * from {{ ref('stg_deal__certificate_layout') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

step_rows as (
    select
        deal_id,
        period_number,
        -- the steps' structs unnested into their named columns (no alias to give)
        {{ unnest_json_records('amounts', '$.deal.payment_steps', {
            'step_order': 'integer', 'step': 'string', 'funded_from': 'string',
            'due_cents': cents_type(), 'paid_cents': cents_type(), 'left_cents': cents_type()
        }) }}  -- noqa: AL03
    from waterfall
    where {{ json_text('amounts', '$.class.class_order') }}::integer = 1
),

printed_lines as (
    -- the deal's own line number of each step (older forms number the lines differently)
    select
        deal_id,
        payment_step,
        min(regexp_extract(line, '^([0-9]+)', 1)::integer) as certificate_line_number
    from layout
    where payment_step is not null
    group by deal_id, payment_step
),

final as (
    select
        -- ids
        step_rows.deal_id,
        step_rows.period_number,
        step_rows.step_order,
        -- attributes
        step_rows.step,
        steps.pays,
        steps.section,
        step_rows.funded_from,
        printed_lines.certificate_line_number,
        -- dates
        calendar.distribution_date,
        -- amounts
        {{ from_cents('step_rows.due_cents') }} as amount_due,
        {{ from_cents('step_rows.paid_cents') }} as amount_paid,
        {{ from_cents('step_rows.due_cents - step_rows.paid_cents') }} as shortfall_amount,
        {{ from_cents('step_rows.left_cents') }} as funds_remaining_amount
    from step_rows
    inner join steps on step_rows.step = steps.step
    inner join calendar
        on step_rows.deal_id = calendar.deal_id and step_rows.period_number = calendar.period_number
    left join printed_lines
        on step_rows.deal_id = printed_lines.deal_id and step_rows.step = printed_lines.payment_step
)

select * from final
