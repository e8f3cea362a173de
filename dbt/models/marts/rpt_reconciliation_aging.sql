-- Regulation AB 1122(d)(2)(vii): reconciling items are resolved within 90 days. A reconciling item
-- is a receivable's balance (beginning or ending) on which the servicer's tape and the Simple
-- Interest recomputation differ (rpt_balance_reconciliation), over consecutive Collection Periods.
-- It is resolved in the first later period whose tape is loaded and agrees; its age runs from the
-- end of the period it appeared in to the end of the period that resolved it (or, still open, to
-- the end of the latest loaded period of the trust).

with differences as (
    select * from {{ ref('rpt_balance_reconciliation') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

tape_status as (
    select * from {{ ref('int_collection_period__tape_status') }}
),

numbered as (
    select
        differences.deal_id,
        differences.receivable_id,
        differences.figure,
        differences.collection_period,
        differences.difference_amount,
        calendar.period_number,
        -- gaps and islands: consecutive periods share period_number - their rank
        calendar.period_number - row_number() over (
            partition by differences.deal_id, differences.receivable_id, differences.figure
            order by calendar.period_number
        ) as island
    from differences
    inner join calendar
        on
            differences.deal_id = calendar.deal_id
            and differences.collection_period = calendar.collection_period
),

items as (
    select
        deal_id,
        receivable_id,
        figure,
        min(period_number) as first_period_number,
        max(period_number) as last_period_number,
        count(*) as periods_differing,
        {{ min_by_non_null('difference_amount', 'period_number') }} as first_difference_amount,
        {{ max_by_non_null('difference_amount', 'period_number') }} as last_difference_amount
    from numbered
    group by deal_id, receivable_id, figure, island
),

latest_loaded as (
    select
        deal_id,
        max(period_number) as period_number
    from tape_status
    where is_tape_loaded
    group by deal_id
),

aged as (
    select
        items.deal_id,
        items.receivable_id,
        items.figure,
        first.collection_period as first_collection_period,
        last.collection_period as last_collection_period,
        items.periods_differing,
        items.first_difference_amount,
        items.last_difference_amount,
        -- the next period resolves the item when its tape is loaded (it then agrees, or the
        -- island would continue)
        case when items.last_period_number < latest_loaded.period_number then resolving.collection_period end
            as resolved_collection_period,
        first.collection_period_end_date as appeared_on,
        case
            when items.last_period_number < latest_loaded.period_number then resolving.collection_period_end_date
        end as resolved_on,
        latest.collection_period_end_date as latest_loaded_period_end_date
    from items
    inner join latest_loaded on items.deal_id = latest_loaded.deal_id
    inner join calendar as first
        on items.deal_id = first.deal_id and items.first_period_number = first.period_number
    inner join calendar as last
        on items.deal_id = last.deal_id and items.last_period_number = last.period_number
    inner join calendar as latest
        on items.deal_id = latest.deal_id and latest_loaded.period_number = latest.period_number
    left join calendar as resolving
        on items.deal_id = resolving.deal_id and items.last_period_number + 1 = resolving.period_number
)

select
    deal_id,
    receivable_id,
    figure,
    first_collection_period,
    last_collection_period,
    periods_differing,
    first_difference_amount,
    last_difference_amount,
    resolved_collection_period,
    appeared_on,
    resolved_on,
    {{ days_between('appeared_on', 'coalesce(resolved_on, latest_loaded_period_end_date)') }} as age_days,
    resolved_on is not null as is_resolved,
    coalesce({{ days_between('appeared_on', 'resolved_on') }} <= 30, false) as is_resolved_within_30_days,
    coalesce({{ days_between('appeared_on', 'resolved_on') }} <= 90, false) as is_resolved_within_90_days,
    -- 1122(d)(2)(vii): an item open, or resolved, after more than 90 days is late
    {{ days_between('appeared_on', 'coalesce(resolved_on, latest_loaded_period_end_date)') }} > 90 as is_late
from aged
