"""The pool and the trust where a projection starts: the cutoff pool (the Receivable Schedule) or
the pool after any computed Collection Period of the published warehouse."""

import datetime as dt
from decimal import Decimal

from dagster_project.business_calendar import payment_periods
from dagster_project.deal import Deal
from dagster_project.projections.engine import UNIT, Paths, contractual_paths
from dagster_project.projections.waterfall import Opening

CUTOFF_POOL = f"""
select (apr * {UNIT})::bigint as apr_e6, remaining_term as remaining,
    greatest(original_term - remaining_term, 0) as age,
    (principal_balance * {UNIT})::bigint as balance, (scheduled_payment * {UNIT})::bigint as payment
from raw.receivable_schedule
where deal_id = $deal_id
"""

# the remaining term from the period end to the maturity month, as dbt/macros/pool_age.sql
# measures it for line 14 (the dbt macro cannot be called from here); the age from the original
# term
PERIOD_POOL = f"""
with outstanding as (
    select
        schedule.apr, schedule.original_term, schedule.scheduled_payment, fact.ending_balance,
        greatest(datediff('month', $period_end, fact.maturity_date), 0) as remaining
    from marts.fct_receivable_period as fact
    inner join raw.receivable_schedule as schedule using (deal_id, receivable_id)
    where fact.deal_id = $deal_id and fact.collection_period = $period and fact.ending_balance > 0
)
select (apr * {UNIT})::bigint as apr_e6, remaining,
    greatest(original_term - remaining, 0) as age,
    (ending_balance * {UNIT})::bigint as balance, (scheduled_payment * {UNIT})::bigint as payment
from outstanding
"""


class StartError(ValueError):
    """A starting point the warehouse does not have (the message says which)."""


def pool_paths(con, deal: Deal, period: str | None) -> Paths:
    if period is None:
        sql, params = CUTOFF_POOL, {"deal_id": deal.deal_id}
    else:
        end = _period(deal, period).collection_period_end
        sql = PERIOD_POOL
        params = {"deal_id": deal.deal_id, "period": period, "period_end": end}
    columns = con.execute(sql, params).fetchnumpy()
    if not len(columns["balance"]):
        raise StartError(
            f"{deal.deal_id}: no outstanding receivable "
            + (f"after {period}" if period else "in the Receivable Schedule")
            + " in the warehouse"
        )
    names = ("apr_e6", "remaining", "age", "balance", "payment")
    return contractual_paths(*(columns[name] for name in names))


def _period(deal: Deal, period: str):
    for p in payment_periods(deal):
        if p.collection_period == period:
            return p
    raise StartError(f"{period} is not a Collection Period of {deal.trust_name}")


def _index_rate(con, deal: Deal, on: dt.date) -> Decimal:
    """The floating index of the last accrual period paid by `on` (the first one at the cutoff),
    held flat over the projection; 0 for a deal without a floating class."""
    if not any(c.rate_type == "floating" for c in deal.classes):
        return Decimal(0)
    row = con.execute(
        "select index_rate from raw.index_rates where deal_id = ? "
        "order by (distribution_date <= ?) desc, "
        "case when distribution_date <= ? then distribution_date end desc, distribution_date "
        "limit 1",
        [deal.deal_id, on, on],
    ).fetchone()
    return Decimal(str(row[0])) if row else Decimal(0)


def opening(con, deal: Deal, period: str | None) -> Opening:
    """The note balances, unpaid amounts and reserve after the starting Distribution Date."""
    if period is None:
        first = payment_periods(deal)[0]
        return Opening(
            0,
            {c.class_id: c.initial_balance for c in deal.classes},
            {c.class_id: Decimal(0) for c in deal.classes},
            deal.initial_reserve_deposit,
            Decimal(0),
            _index_rate(con, deal, first.distribution_date),
            deal.closing_date,
        )
    start = _period(deal, period)
    notes = con.execute(
        "select class_id, ending_balance, interest_shortfall_amount "
        "from marts.fct_note_distribution where deal_id = ? and distribution_date = ?",
        [deal.deal_id, start.distribution_date],
    ).fetchall()
    if not notes:
        raise StartError(f"{deal.deal_id}: {period} is not computed in the warehouse")
    lines = dict(
        con.execute(
            "select key, amount from marts.rpt_servicer_certificate where deal_id = ? and "
            "distribution_date = ? and key in ('reserve_account_ending_balance', "
            "'servicing_fee_shortfall_amount')",
            [deal.deal_id, start.distribution_date],
        ).fetchall()
    )
    return Opening(
        start.period_number,
        {c: Decimal(b) for c, b, _s in notes},
        {c: Decimal(s or 0) for c, _b, s in notes},
        Decimal(lines.get("reserve_account_ending_balance") or 0).quantize(Decimal("0.01")),
        Decimal(lines.get("servicing_fee_shortfall_amount") or 0).quantize(Decimal("0.01")),
        _index_rate(con, deal, start.distribution_date),
        start.distribution_date,
    )
