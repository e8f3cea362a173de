-- A class still owing principal on or after its Class Final Distribution Date is only acceptable
-- when every dollar of Available Funds and of the Reserve Account went to the waterfall (no
-- Excess Collections, nothing released to the Certificateholder).
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'fct_note_distribution'}}}) }}
select
    notes.deal_id,
    notes.distribution_date,
    notes.class_id,
    dates.excess_collections_amount,
    dates.reserve_released_to_certificateholder_amount
from {{ ref('fct_note_distribution') }} as notes
inner join {{ ref('fct_distribution_date') }} as dates
    on notes.deal_id = dates.deal_id and notes.period_number = dates.period_number
where
    notes.is_unpaid_after_final_date
    and (dates.excess_collections_amount > 0 or dates.reserve_released_to_certificateholder_amount > 0)
