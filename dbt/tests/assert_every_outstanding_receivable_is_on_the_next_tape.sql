-- A receivable still in the pool at a period end must appear on the next period's tape.
with periods as (
    select * from {{ ref('fct_receivable_period') }}
),

last_loaded as (
    select max(period_number) as period_number from periods
)

select previous.receivable_id, previous.collection_period
from periods as previous
left join periods as following
    on previous.receivable_id = following.receivable_id
    and following.period_number = previous.period_number + 1
where previous.is_outstanding
    and previous.period_number < (select period_number from last_loaded)
    and following.receivable_id is null
