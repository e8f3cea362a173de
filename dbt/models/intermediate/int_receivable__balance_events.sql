-- The transactions the Simple Interest Method takes in turn (Art. I "Simple Interest Method",
-- "Principal Balance"; 4.3): each receivable's payments, rebates and assessed late fees, numbered
-- in the order they apply (date; on one date a late fee, then a rebate, then a payment). The fold
-- (int_receivable__simple_interest_steps) reads each round's transactions from this table: numbered
-- once, and never held in memory whole (macros/simple_interest_fold.sql).
-- Incremental (macros/incremental.sql): a build of a trust from Collection Period P numbers the
-- transactions of P and later on from each receivable's last step before P (transaction dates lie
-- inside their Collection Period, checked at ingestion, so the order is the whole history's).
{{ loan_level_incremental_config() }}

with

computable_periods as (
    select * from {{ ref('int_collection_period__tape_status') }}
    where is_computable
),

transactions as (
    -- the periods whose tape and every earlier one are loaded (a gap stops the fold)
    select * from {{ ref('stg_servicer__payment_transactions') }}
    where
        {{ is_rebuilt() }}
        and transaction_type in ('payment', 'rebate', 'late_fee')
        and (deal_id, collection_period) in (
            select
                computable_periods.deal_id,
                computable_periods.collection_period
            from computable_periods
        )
),

kept_steps as (
    -- each receivable's last step kept (none when every row is recomputed)
    {% if is_incremental() %}
        select
            kept.deal_id,
            kept.receivable_id,
            kept.last_kept.step_number as last_step_number
        from ({{ last_kept_rows({'step_number': 'step_number'}, 'step_number', among='transactions') }}) as kept
    {% else %}
        select
            null::string as deal_id,
            null::string as receivable_id,
            null::bigint as last_step_number
        where false
    {% endif %}
),

final as (
    select
        transactions.deal_id,
        transactions.receivable_id,
        coalesce(kept_steps.last_step_number, 0) + row_number() over (
            partition by transactions.deal_id, transactions.receivable_id
            order by
                transactions.transaction_date,
                case transactions.transaction_type when 'late_fee' then 0 when 'rebate' then 1 else 2 end,
                transactions.transaction_amount
        ) as step_number,
        transactions.collection_period,
        transactions.transaction_date,
        transactions.transaction_type,
        {{ to_cents('transactions.transaction_amount') }}::bigint as amount_cents
    from transactions
    left join kept_steps
        on
            transactions.deal_id = kept_steps.deal_id
            and transactions.receivable_id = kept_steps.receivable_id
)

select * from final
