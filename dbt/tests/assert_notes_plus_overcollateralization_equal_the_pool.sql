-- Ending Note Balance plus overcollateralization equals the Pool Balance (lines 8 end, 11, 5),
-- and the certificate's Note Balance is the sum of the class balances.
-- in Dagster, an asset check on the model it is about (it reads several)
{{ config(meta={'dagster': {'ref': {'name': 'rpt_servicer_certificate'}}}) }}
with cert as (
    select
        distribution_date,
        max(amount) filter (where key = 'class_balance_end:total') as note_balance,
        max(amount) filter (where key = 'overcollateralization_amount') as overcollateralization,
        max(amount) filter (where key = 'ending_pool_balance') as pool_balance
    from {{ ref('rpt_servicer_certificate') }}
    group by distribution_date
),

classes as (
    select distribution_date, sum(ending_balance) as note_balance
    from {{ ref('fct_note_distribution') }}
    group by distribution_date
)

select cert.*
from cert
inner join classes on cert.distribution_date = classes.distribution_date
where cert.note_balance + cert.overcollateralization <> cert.pool_balance
    or cert.note_balance <> classes.note_balance
