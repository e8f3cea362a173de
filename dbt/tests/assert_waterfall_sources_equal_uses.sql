-- Sources equal uses on every Distribution Date: Available Funds (Available Collections plus the
-- Reserve Account Draw Amount) are exactly what the priority of payments pays plus the Excess
-- Collections; the Reserve Account rolls forward from its beginning balance to its ending one.
with steps as (
    select distribution_date, sum(amount_paid) as paid
    from {{ ref('fct_waterfall') }}
    where funded_from = 'available_funds'
    group by distribution_date
),

dates as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
)

select dates.distribution_date, dates.available_funds, steps.paid
from dates
inner join steps on dates.distribution_date = steps.distribution_date
where {{ to_cents('steps.paid') }} <> dates.available_funds
    or dates.available_funds <> dates.available_collections_cents + dates.reserve_draw
    or dates.reserve_beginning_balance + dates.reserve_earnings_cents - dates.reserve_draw
        + dates.paid_reserve_deposit - dates.reserve_to_principal - dates.reserve_to_successor_servicer
        - dates.reserve_to_certificateholder <> dates.reserve_balance_end
