"""Inputs beside the tapes: the floating index per accrual period, CarMax's tangible net worth,
account earnings.

These are synthetic series shaped after history (1-month LIBOR rose from under 0.2% in 2015 to
about 2.5% in 2019, then fell in 2020). Only the first period's LIBOR is a fact of the deal: the
value implied by the Class A-2b first-period interest in Art. I ($78,602.15 on $193,000,000 for
19 days at LIBOR + 0.60%), i.e. 0.17166%.
"""

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

import pandas as pd

from dagster_project.business_calendar import PaymentPeriod, add_months
from dagster_project.deal import Deal
from dagster_project.money import round_cents

# Anchor points (month, 1-month LIBOR in percent) of the synthetic path; linear in between.
LIBOR_ANCHORS = [
    (dt.date(2015, 10, 1), Decimal("0.17166")),
    (dt.date(2016, 1, 1), Decimal("0.42")),
    (dt.date(2016, 12, 1), Decimal("0.77")),
    (dt.date(2017, 12, 1), Decimal("1.56")),
    (dt.date(2018, 12, 1), Decimal("2.50")),
    (dt.date(2019, 6, 1), Decimal("2.40")),
    (dt.date(2020, 4, 1), Decimal("0.45")),
    (dt.date(2020, 12, 1), Decimal("0.15")),
    (dt.date(2022, 6, 1), Decimal("0.10")),
]


def implied_first_libor(deal: Deal, first: PaymentPeriod) -> Decimal:
    """The LIBOR (to 5 decimals of a percent) whose interest rounds to the Art. I amount."""
    for note_class in deal.classes:
        if note_class.rate_type == "floating" and note_class.first_period_interest is not None:
            days = Decimal(first.actual_days)
            rate = note_class.first_period_interest * 360 / (note_class.initial_balance * days)
            libor = (rate - note_class.spread).quantize(Decimal("0.0000001"), ROUND_HALF_UP)
            for candidate in (libor, libor + Decimal("0.0000001"), libor - Decimal("0.0000001")):
                amount = round_cents(
                    note_class.initial_balance * (candidate + note_class.spread) * days / 360
                )
                if amount == note_class.first_period_interest:
                    return candidate
            raise ValueError("no 5-decimal LIBOR reproduces the first-period interest")
    return LIBOR_ANCHORS[0][1] / 100


def _interpolate(day: dt.date) -> Decimal:
    for (d0, v0), (d1, v1) in zip(LIBOR_ANCHORS, LIBOR_ANCHORS[1:], strict=False):
        if d0 <= day <= d1:
            weight = Decimal((day - d0).days) / Decimal((d1 - d0).days)
            return (v0 + (v1 - v0) * weight).quantize(Decimal("0.00001"), ROUND_HALF_UP)
    return LIBOR_ANCHORS[-1][1]


def index_rate_frame(deal: Deal, periods: list[PaymentPeriod]) -> pd.DataFrame:
    """One row per accrual period: the floating index as a fraction (0.0017166 = 0.17166%)."""
    rows = []
    for period in periods:
        if period.period_number == 1:
            libor = implied_first_libor(deal, period)
        else:
            libor = _interpolate(period.accrual_start) / 100
        rows.append(
            {
                "accrual_period_start": period.accrual_start,
                "accrual_period_end": period.distribution_date,
                "distribution_date": period.distribution_date,
                "index_rate": str(libor),
            }
        )
    return pd.DataFrame(rows)


TNW_ANCHOR = (dt.date(2014, 2, 28), Decimal("2750000000.00"))  # a fiscal quarter end and its value
TNW_GROWTH = Decimal("31250000.00")  # per quarter


def tangible_net_worth_frame(first: dt.date, last: dt.date) -> pd.DataFrame:
    """CarMax, Inc. Consolidated Tangible Net Worth at each fiscal quarter end (synthetic) from the
    year before `first` to `last`: one series for the whole shelf, growing by TNW_GROWTH a quarter
    from TNW_ANCHOR (the same value for a quarter whichever trusts are generated)."""
    anchor, value = TNW_ANCHOR
    quarter_end = dt.date(first.year - 1, 2, 28)
    quarters = (quarter_end.year - anchor.year) * 4
    rows, value = [], value + TNW_GROWTH * quarters
    while quarter_end <= last:
        rows.append(
            {"fiscal_quarter_end": quarter_end, "consolidated_tangible_net_worth": str(value)}
        )
        next_month = add_months(quarter_end.replace(day=1), 3)
        quarter_end = add_months(next_month, 1) - dt.timedelta(days=1)
        value += TNW_GROWTH
    return pd.DataFrame(rows)


def account_earnings_frame(deal: Deal, periods, rates: pd.DataFrame, collections) -> pd.DataFrame:
    """Interest on the Collection Account and investment earnings of the Reserve Account.

    Collections are remitted monthly (4.2 Monthly Remittance Condition), so the Collection Account
    earns about a day of interest; the Reserve Account is invested in Permitted Investments
    (4.7(b)).
    """
    rows = []
    for period, rate in zip(periods, rates["index_rate"], strict=False):
        rate = Decimal(rate)
        collected = collections.get(period.collection_period, Decimal(0))
        rows.append(
            {
                "distribution_date": period.distribution_date,
                "collection_account_interest": str(round_cents(collected * rate / 365)),
                "reserve_account_investment_earnings": str(
                    round_cents(deal.required_reserve_amount * rate / 12)
                ),
            }
        )
    return pd.DataFrame(rows)
