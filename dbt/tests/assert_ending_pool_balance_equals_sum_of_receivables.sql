-- Art. I "Pool Balance": the aggregate Principal Balance of the Receivables at the period end.
-- A build with a window checks its window's periods (macros/incremental.sql).
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'fct_pool_period'}}}) }}
with receivables as (
    select
        deal_id,
        collection_period,
        sum(ending_balance) as receivable_total
    from {{ ref('fct_receivable_period') }}
    where {{ in_window() }}
    group by deal_id, collection_period
)

-- a period with no receivable on its tape has none outstanding: its Pool Balance must be zero
select
    pool.deal_id,
    pool.collection_period,
    pool.ending_pool_balance,
    coalesce(receivables.receivable_total, 0) as receivable_total
from {{ ref('fct_pool_period') }} as pool
left join receivables
    on pool.deal_id = receivables.deal_id and pool.collection_period = receivables.collection_period
where
    {{ in_window('pool.deal_id', 'pool.collection_period') }}
    and pool.ending_pool_balance <> coalesce(receivables.receivable_total, 0)
