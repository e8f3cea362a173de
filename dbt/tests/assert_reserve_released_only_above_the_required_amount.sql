-- SSA 4.7(d): the Reserve Account releases to the Certificateholder only its excess over the
-- Required Reserve Account Amount, so after a release the Reserve Account holds exactly that
-- amount (line 58 = line 50), and never less.
-- in Dagster, an asset check on the model it is about
{{ config(meta={'dagster': {'ref': {'name': 'fct_distribution_date'}}}) }}
select
    deal_id,
    distribution_date,
    reserve_released_to_certificateholder_amount,
    required_reserve_account_amount,
    reserve_account_ending_balance
from {{ ref('fct_distribution_date') }}
where
    reserve_released_to_certificateholder_amount > 0
    and reserve_account_ending_balance <> required_reserve_account_amount
