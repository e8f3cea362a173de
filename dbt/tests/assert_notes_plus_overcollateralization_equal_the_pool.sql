-- Ending Note Balance plus overcollateralization equals the Pool Balance (lines 8 end, 11, 5),
-- and the Note Balance is the sum of the class balances.
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'fct_distribution_date'}}}) }}
with classes as (
    select
        deal_id,
        period_number,
        sum(ending_balance) as note_balance
    from {{ ref('fct_note_distribution') }}
    group by deal_id, period_number
)

select
    dates.deal_id,
    dates.distribution_date,
    dates.note_balance_after_amount,
    dates.overcollateralization_amount,
    dates.ending_pool_balance
from {{ ref('fct_distribution_date') }} as dates
inner join classes on dates.deal_id = classes.deal_id and dates.period_number = classes.period_number
where
    dates.note_balance_after_amount + dates.overcollateralization_amount <> dates.ending_pool_balance
    or dates.note_balance_after_amount <> classes.note_balance
