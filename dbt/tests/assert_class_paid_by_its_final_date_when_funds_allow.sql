-- A class still owing principal on or after its Class Final Distribution Date is only acceptable
-- when every dollar of Available Funds and of the Reserve Account went to the waterfall (no
-- Excess Collections, nothing released to the Certificateholder).
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'fct_note_distribution'}}}) }}
select notes.distribution_date, notes.class_id, dates.excess_collections, dates.reserve_to_certificateholder
from {{ ref('fct_note_distribution') }} as notes
inner join {{ ref('int_waterfall__distribution_dates') }} as dates
    on notes.distribution_date = dates.distribution_date
where notes.is_unpaid_after_final_date
    and (dates.excess_collections > 0 or dates.reserve_to_certificateholder > 0)
