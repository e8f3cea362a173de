-- The Monthly Servicer's Certificate (Exhibit A): one row per trust, Distribution Date and line,
-- every line of the trust's form for every date. Line ids and labels come from the trust's
-- certificate layout (dagster_project/certificate_layout.py); each line's key names a column of
-- fct_distribution_date, or of fct_note_distribution for the lines per class.
-- `value` is the figure as the certificate prints it (no $ or commas; percentages, terms and rates
-- rounded half up to their printed decimals); `amount` is the number.
with

dates as (
    select * from {{ ref('fct_distribution_date') }}
),

notes as (
    select * from {{ ref('fct_note_distribution') }}
),

layout as (
    select * from {{ ref('stg_deal__certificate_layout') }}
),

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

scalar_values as (
    -- every figure of fct_distribution_date but its ids, dates and flags
    select
        scalar_rows.deal_id,
        scalar_rows.distribution_date,
        scalar_rows.key,
        scalar_rows.amount
    from {{ unpivoted_all_but('dates', ref('fct_distribution_date'), ['deal_id', 'distribution_date'], [
        'period_number', 'collection_period', 'determination_date',
        'collection_period_start_date', 'collection_period_end_date', 'related_fiscal_quarter_end_date',
        'is_reserve_released_in_full', 'is_tangible_net_worth_reported', 'is_clean_up_call_eligible',
        'tangible_net_worth_test'
    ], 'decimal(38, 10)', 'key', 'amount') }} as scalar_rows
),

flag_values as (
    -- line 80 (Yes/No), and nothing when the Consolidated Tangible Net Worth is not delivered
    select
        deal_id,
        distribution_date,
        'tangible_net_worth_test' as key,
        case when tangible_net_worth_test then 1 else 0 end::decimal(38, 10) as amount
    from dates
    where is_tangible_net_worth_reported
),

class_metrics as (
    -- each line per class, named by its key
    select
        deal_id,
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
        deal_id,
        distribution_date,
        metric || ':' || class_id as key,
        amount
    from {{ unpivoted('class_metrics', ['deal_id', 'distribution_date', 'class_id'], [
        'class_balance_begin', 'class_balance_end', 'class_factor_begin', 'class_factor_end',
        'monthly_interest', 'additional_note_interest', 'interest_on_additional_interest',
        'total_note_interest', 'interest_paid', 'principal_paid', 'class_distribution'
    ], 'decimal(38, 10)', 'metric', 'amount') }} as class_rows
),

note_totals as (
    -- lines 8 and 9, total: the Note Balance and the Note Pool Factor of all classes
    select
        notes.deal_id,
        notes.distribution_date,
        sum(notes.beginning_balance) as class_balance_begin,
        sum(notes.ending_balance) as class_balance_end,
        {{ factor_7(to_cents('sum(notes.beginning_balance)'), to_cents('sum(classes.initial_balance)')) }}
            as class_factor_begin,
        {{ factor_7(to_cents('sum(notes.ending_balance)'), to_cents('sum(classes.initial_balance)')) }}
            as class_factor_end
    from notes
    inner join classes on notes.deal_id = classes.deal_id and notes.class_id = classes.class_id
    group by notes.deal_id, notes.distribution_date
),

total_values as (
    select
        deal_id,
        distribution_date,
        metric || ':total' as key,
        amount
    from {{ unpivoted('note_totals', ['deal_id', 'distribution_date'], [
        'class_balance_begin', 'class_balance_end', 'class_factor_begin', 'class_factor_end'
    ], 'decimal(38, 10)', 'metric', 'amount') }} as total_rows
),

all_values as (
    select * from scalar_values
    union all
    select * from flag_values
    union all
    select * from class_values
    union all
    select * from total_values
),

final as (
    select
        dates.deal_id,
        dates.distribution_date,
        layout.line_order,
        layout.certificate_section as section,
        layout.group_label,
        layout.line,
        layout.line_label as label,
        layout.line_key as key,
        layout.line_kind as kind,
        all_values.amount,
        case
            when layout.line_kind = 'count' then all_values.amount::bigint::string
            when layout.line_kind = 'factor' then {{ decimal_text('all_values.amount', 12, 7) }}
            when layout.line_kind = 'rate' then {{ decimal_text('all_values.amount', 12, 5) }}
            when layout.line_kind = 'flag' then case all_values.amount when 1 then 'Yes' when 0 then 'No' end
            -- a weighted average of an empty pool has no meaning
            when layout.line_kind in ('percent', 'months')
                then coalesce({{ decimal_text('all_values.amount', 18, 2) }}, 'N/A')
            -- money and the rest
            else {{ decimal_text('all_values.amount', 18, 2) }}
        end as value
    from dates
    inner join layout on dates.deal_id = layout.deal_id
    left join all_values
        on
            dates.deal_id = all_values.deal_id
            and dates.distribution_date = all_values.distribution_date
            and layout.line_key = all_values.key
)

select * from final
