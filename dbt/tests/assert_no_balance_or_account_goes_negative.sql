-- No class balance, unpaid amount, account or remaining fund goes negative; no class is paid more
-- principal than it owes or more interest than is due.
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'fct_waterfall'}}}) }}
select 'note' as what, distribution_date, class_id as item
from {{ ref('fct_note_distribution') }}
where ending_balance < 0 or interest_shortfall_amount < 0 or principal_paid_amount > beginning_balance
    or interest_paid_amount > total_note_interest_amount or interest_paid_amount < 0
    or principal_paid_amount < 0
union all
select 'step', distribution_date, pays
from {{ ref('fct_waterfall') }}
where amount_paid < 0 or shortfall_amount < 0 or funds_remaining_amount < 0
union all
select 'reserve', distribution_date, 'Reserve Account'
from {{ ref('int_waterfall__distribution_dates') }}
where reserve_balance_end < 0 or reserve_draw < 0 or servicing_fee_unpaid_end < 0
