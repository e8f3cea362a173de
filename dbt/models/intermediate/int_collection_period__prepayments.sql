-- Prepayment per trust and Collection Period, as auto ABS investors measure it. Each receivable
-- outstanding at the beginning of the period is scheduled to amortise its level payment less a
-- month's interest at its APR on the beginning balance (one-twelfth, rounded half up to the
-- cent), between zero and the balance; what the obligor paid beyond that (principal collected
-- and rebates) is prepaid (unscheduled) principal. Defaults and purchases are not prepayments
-- (they are lines 3 and 4). The single-month mortality (SMM) is the prepaid principal over the
-- beginning balance less the scheduled principal; CPR = 1 - (1 - SMM)^12; the ABS speed (the
-- convention auto ABS is priced at, a share of the original number of receivables) is
-- SMM / (1 + SMM x (age - 1)), age the pool's balance-weighted months since first payment. All in
-- integer units of 1e-12, rounded half up at each product (money.sql's div_half_up): no floats.
-- Incremental (macros/incremental.sql): a period's figures come from its own receivable-periods
-- only, so a build recomputes the trusts' periods of its window and keeps the others.
{{ loan_level_incremental_config() }}

with

periods as (
    select * from {{ ref('fct_receivable_period') }}
    where beginning_balance > 0 and {{ is_rebuilt() }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

per_receivable as (
    select
        periods.deal_id,
        periods.collection_period,
        {{ to_cents('periods.beginning_balance') }} as beginning_cents,
        least(
            {{ to_cents('periods.beginning_balance') }},
            greatest(
                {{ to_cents('schedule.scheduled_payment_amount') }}
                - {{ div_half_up(to_cents('periods.beginning_balance') ~ ' * ' ~ apr_e6('schedule.apr'), '12000000') }},
                0
            )
        ) as scheduled_principal_cents,
        {{ to_cents('periods.principal_collected_amount + periods.rebate_principal_amount') }}
            as principal_paid_cents,
        greatest({{ month_boundaries('schedule.first_payment_date', 'calendar.collection_period_start_date') }} + 1, 1)
            as age_months
    from periods
    inner join schedule
        on periods.deal_id = schedule.deal_id and periods.receivable_id = schedule.receivable_id
    inner join calendar
        on periods.deal_id = calendar.deal_id and periods.collection_period = calendar.collection_period
),

per_period as (
    select
        deal_id,
        collection_period,
        sum(beginning_cents) as beginning_cents,
        sum(scheduled_principal_cents) as scheduled_principal_cents,
        sum(greatest(principal_paid_cents - scheduled_principal_cents, 0)) as prepaid_principal_cents,
        sum(beginning_cents * age_months) as age_weighted_cents
    from per_receivable
    group by deal_id, collection_period
),

speeds as (
    -- the SMM as an integer fraction in units of 1e-12 (half up): exact arithmetic from here on
    select
        *,
        {{ div_half_up(widened('prepaid_principal_cents') ~ ' * 1000000000000', 'greatest(beginning_cents - scheduled_principal_cents, 1)') }}
            as smm_e12,
        -- the pool's age in whole months (balance-weighted, half up)
        {{ div_half_up('age_weighted_cents', 'greatest(beginning_cents, 1)') }} as pool_age_months
    from per_period
),

squared as (
    -- (1 - SMM)^12 in units of 1e-12, squared and multiplied with each product rounded half up
    select
        *,
        {{ div_half_up('(1000000000000 - smm_e12) * (1000000000000 - smm_e12)', '1000000000000') }}
            as survival_2_e12
    from speeds
),

fourth_power as (
    select
        *,
        {{ div_half_up('survival_2_e12 * survival_2_e12', '1000000000000') }} as survival_4_e12
    from squared
)

select
    deal_id,
    collection_period,
    {{ from_cents('scheduled_principal_cents') }} as scheduled_principal_amount,
    {{ from_cents('prepaid_principal_cents') }} as prepaid_principal_amount,
    -- percent with ten decimals: a fraction in units of 1e-12 is a percent in units of 1e-10
    {{ scaled('smm_e12', 10) }}::decimal(24, 10) as single_month_mortality_percent,
    -- CPR = 1 - (1 - SMM)^12 = 1 - s4 x s4 x s4 (s4 = (1 - SMM)^4)
    {{ scaled(
        '1000000000000 - ' ~ div_half_up(div_half_up('survival_4_e12 * survival_4_e12', '1000000000000')
            ~ ' * survival_4_e12', '1000000000000'),
        10
    ) }}::decimal(24, 10) as conditional_prepayment_rate_percent,
    pool_age_months,
    -- ABS = SMM / (1 + SMM x (age - 1)), half up
    {{ scaled(div_half_up('smm_e12 * 1000000000000', '1000000000000 + smm_e12 * (pool_age_months - 1)'), 10) }}::decimal(24, 10)
        as abs_speed_percent
from fourth_power
