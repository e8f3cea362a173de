-- Every identity of the certificate holds (marts.rpt_certificate_tieouts: the pool roll-forward,
-- sources equal uses, notes plus overcollateralization equal the pool, the class balances, the
-- Reserve Account roll-forward, the pool factors, the statement repeating the certificate).
select *
from {{ ref('rpt_certificate_tieouts') }}
where not is_tied_out
