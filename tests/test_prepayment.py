"""Prepayment speeds (fct_pool_period: scheduled and prepaid principal, SMM, CPR, ABS) against a
plain-Python recomputation from the receivable-period mart and the Receivable Schedule."""

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

import duckdb

CENT = Decimal("0.01")
TEN = Decimal("0.0000000001")
UNIT = 10**12


def half_up(numerator: int, denominator: int) -> int:
    """Integer division rounded half up (non-negative operands)."""
    return (2 * numerator + denominator) // (2 * denominator)


def scheduled_principal(begin: Decimal, apr: Decimal, payment: Decimal) -> Decimal:
    """The level payment less a month's interest at the APR (half up to the cent), between zero
    and the balance."""
    interest = (begin * apr / 12).quantize(CENT, ROUND_HALF_UP)
    return min(begin, max(payment - interest, Decimal(0)))


def speeds(receivables: list[tuple], period_start: dt.date) -> dict:
    """receivables: (beginning balance, principal paid, APR, scheduled payment, first payment)."""
    begin = sched = prepaid = Decimal(0)
    age_weighted = Decimal(0)
    for balance, paid, apr, payment, first in receivables:
        scheduled = scheduled_principal(balance, apr, payment)
        begin += balance
        sched += scheduled
        prepaid += max(paid - scheduled, Decimal(0))
        months = (period_start.year - first.year) * 12 + period_start.month - first.month + 1
        age_weighted += balance * 100 * max(months, 1)
    # fractions in integer units of 1e-12, half up at each product (as the model: no floats)
    smm = half_up(int(prepaid * 100) * UNIT, max(int((begin - sched) * 100), 1))
    age = half_up(int(age_weighted), max(int(begin * 100), 1))
    survival_4 = half_up(half_up((UNIT - smm) ** 2, UNIT) ** 2, UNIT)
    survival_12 = half_up(half_up(survival_4 * survival_4, UNIT) * survival_4, UNIT)
    cpr = UNIT - survival_12
    abs_speed = half_up(smm * UNIT, UNIT + smm * (age - 1))
    smm, cpr, abs_speed = (Decimal(x) * TEN for x in (smm, cpr, abs_speed))  # percent
    return {"scheduled": sched, "prepaid": prepaid, "smm": smm, "cpr": cpr, "abs": abs_speed}


def test_a_hand_worked_month():
    """10,000.00 at 12% with a 500.00 payment: 100.00 of interest, 400.00 scheduled; 1,400.00
    paid is 1,000.00 prepaid; SMM = 1,000 / 9,600 = 10.4166666667%; CPR = 1 - (1 - SMM)^12."""
    result = speeds(
        [(Decimal("10000.00"), Decimal("1400.00"), Decimal("0.12"), Decimal("500.00"),
          dt.date(2015, 1, 15))],
        dt.date(2015, 1, 1),
    )  # fmt: skip
    assert result["scheduled"] == Decimal("400.00") and result["prepaid"] == Decimal("1000.00")
    assert result["smm"] == Decimal("10.4166666667")
    assert abs(result["cpr"] - Decimal("73.2868")) < Decimal("0.0001")  # 1 - 0.8958333^12
    assert result["abs"] == Decimal("10.4166666667")  # age 1: ABS = SMM


def test_prepayment_speeds_match_the_recomputation(built_warehouse):
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    try:
        rows = con.execute(
            "select periods.deal_id, periods.collection_period, "
            "calendar.collection_period_start_date, periods.beginning_balance, "
            "periods.principal_collected_amount + periods.rebate_principal_amount, schedule.apr, "
            "schedule.scheduled_payment_amount, "
            "schedule.first_payment_date "
            "from marts.fct_receivable_period as periods "
            "inner join staging.stg_servicer__receivable_schedule as schedule "
            "using (deal_id, receivable_id) "
            "inner join staging.stg_deal__payment_calendar as calendar "
            "using (deal_id, collection_period) where periods.beginning_balance > 0"
        ).fetchall()
        marts = {
            (deal, period): values
            for deal, period, *values in con.execute(
                "select deal_id, collection_period, scheduled_principal_amount, "
                "prepaid_principal_amount, single_month_mortality_percent, "
                "conditional_prepayment_rate_percent, abs_speed_percent from marts.fct_pool_period"
            ).fetchall()
        }
    finally:
        con.close()
    grouped: dict = {}
    for deal, period, start, *receivable in rows:
        grouped.setdefault((deal, period, start), []).append(tuple(receivable))
    assert len(grouped) > 50
    for (deal, period, start), receivables in grouped.items():
        expected = speeds(receivables, start)
        scheduled, prepaid, smm, cpr, abs_speed = marts[deal, period]
        assert (scheduled, prepaid, smm) == (
            expected["scheduled"], expected["prepaid"], expected["smm"]
        ), period  # fmt: skip
        assert (cpr, abs_speed) == (expected["cpr"], expected["abs"]), period
    # a prime pool: between 1% and 2% ABS in its middle life
    middle = sorted(grouped)[len(grouped) // 2]
    assert Decimal("0.8") < marts[middle[0], middle[1]][4] < Decimal("2.5")
