-- Every identity of the certificate holds (marts.rpt_certificate_tieouts: the pool roll-forward,
-- sources equal uses, notes plus overcollateralization equal the pool, the class balances, the
-- Reserve Account roll-forward, the pool factors, the statement repeating the certificate).
-- One exception: a pool roll-forward that the servicer's data break (a receivable leaving the
-- tapes with a balance the recomputation still carries) is a servicing criterion of the period,
-- 1122(d)(1)(v), whose failure withholds that trust's certificate (the servicing suite), not a
-- failed build of every trust; a break the criterion does not show still fails here.
-- in Dagster, an asset check on the model it is about (it reads two)
{{ config(meta={'dagster': {'ref': {'name': 'rpt_certificate_tieouts'}}}) }}
select tieouts.*
from {{ ref('rpt_certificate_tieouts') }} as tieouts
left join {{ ref('rpt_servicing_criteria') }} as criteria
    on tieouts.deal_id = criteria.deal_id and tieouts.distribution_date = criteria.distribution_date
where
    not tieouts.is_tied_out
    and not (
        tieouts.tieout = 'pool roll-forward'
        and criteria.pool_roll_forward_difference_amount = tieouts.difference_amount
    )
