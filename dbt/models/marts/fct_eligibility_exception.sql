-- The breach register: one row per receivable and Section 2.3 representation it breaches, as the
-- Great Expectations suites on the Receivable Schedule found them (several failed expectations of
-- one representation, e.g. the two terms of 2.3(u), are one row).
with

exceptions as (
    select * from {{ ref('stg_quality__eligibility_exceptions') }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

per_representation as (
    select
        deal_id,
        receivable_id,
        representation,
        {{ ordered_string_agg('suite_name', "', '", 'suite_name', distinct=true) }} as suite_name,
        {{ ordered_string_agg('expectation_name', "'; '", 'expectation_name') }} as expectation_name,
        {{ ordered_string_agg('rule_text', "'; '", 'expectation_name, rule_text') }} as rule_text,
        {{ ordered_string_agg('observed_value', "'; '", 'expectation_name, rule_text, observed_value') }} as observed_value,
        any_value(schedule_delivery_id) as schedule_delivery_id,
        min(discovered_date) as discovered_date
    from exceptions
    group by deal_id, receivable_id, representation
),

final as (
    select
        -- ids
        per_representation.deal_id,
        per_representation.receivable_id,
        per_representation.representation,
        -- attributes
        per_representation.suite_name,
        per_representation.expectation_name,
        per_representation.rule_text,
        per_representation.observed_value,
        per_representation.schedule_delivery_id,
        -- amounts
        schedule.cutoff_principal_balance,
        -- dates
        per_representation.discovered_date
    from per_representation
    left join schedule
        on
            per_representation.deal_id = schedule.deal_id
            and per_representation.receivable_id = schedule.receivable_id
)

select * from final
