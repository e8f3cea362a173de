-- No class balance, unpaid amount, account or remaining fund goes negative; no class is paid more
-- principal than it owes or more interest than is due.
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'fct_waterfall'}}}) }}
select
    'note' as what,
    deal_id,
    distribution_date,
    class_id as item
from {{ ref('fct_note_distribution') }}
where
    ending_balance < 0 or interest_shortfall_amount < 0 or principal_paid_amount > beginning_balance
    or interest_paid_amount > total_note_interest_amount or interest_paid_amount < 0
    or principal_paid_amount < 0
union all
select
    'step' as what,
    deal_id,
    distribution_date,
    step as item
from {{ ref('fct_waterfall') }}
where amount_paid < 0 or shortfall_amount < 0 or funds_remaining_amount < 0
union all
select
    'reserve' as what,
    deal_id,
    distribution_date,
    'Reserve Account' as item
from {{ ref('fct_distribution_date') }}
where reserve_account_ending_balance < 0 or reserve_account_draw_amount < 0 or servicing_fee_shortfall_amount < 0
