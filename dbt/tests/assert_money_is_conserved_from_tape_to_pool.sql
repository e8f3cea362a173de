-- Money is neither created nor lost between the transactions and the pool roll-forward: every
-- cent of obligor payments is interest, fees or principal, Liquidation Proceeds (received on a
-- Defaulted Receivable), excluded (received on a Purchased Receivable) or not applied (paid
-- beyond the payoff: the obligor's, int_receivable__simple_interest_steps), and the pool moves by
-- exactly the principal, purchases and defaults. Over the Collection Periods computed (every
-- earlier tape loaded); a build with a window checks its window's periods (the builds that kept
-- the others checked them, macros/incremental.sql).
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'fct_receivable_period'}}}) }}
with transactions as (
    select
        transactions.deal_id,
        transactions.collection_period,
        sum(transactions.transaction_amount) as paid
    from {{ ref('stg_servicer__payment_transactions') }} as transactions
    inner join {{ ref('int_collection_period__tape_status') }} as periods
        on transactions.deal_id = periods.deal_id and transactions.collection_period = periods.collection_period
    where
        transactions.transaction_type in ('payment', 'rebate')
        and periods.is_computable
        and {{ in_window('transactions.deal_id', 'transactions.collection_period') }}
    group by transactions.deal_id, transactions.collection_period
),

unapplied as (
    select
        deal_id,
        collection_period,
        {{ from_cents('sum(unapplied_cents)') }} as unapplied
    from {{ ref('int_receivable__simple_interest_steps') }}
    where unapplied_cents <> 0 and {{ in_window() }}
    group by deal_id, collection_period
),

applied as (
    select
        deal_id,
        collection_period,
        sum(
            interest_collected_amount + fees_collected_amount + principal_collected_amount
            + rebate_principal_amount + receipts_as_liquidation_amount + receipts_after_purchase_amount
        ) as applied
    from {{ ref('fct_receivable_period') }}
    where {{ in_window() }}
    group by deal_id, collection_period
),

allocated as (
    select
        applied.deal_id,
        applied.collection_period,
        applied.applied + coalesce(unapplied.unapplied, 0) as allocated
    from applied
    left join unapplied
        on applied.deal_id = unapplied.deal_id and applied.collection_period = unapplied.collection_period
)

select
    transactions.deal_id,
    transactions.collection_period,
    transactions.paid,
    allocated.allocated
from transactions
left join allocated
    on transactions.deal_id = allocated.deal_id and transactions.collection_period = allocated.collection_period
where transactions.paid is distinct from allocated.allocated
