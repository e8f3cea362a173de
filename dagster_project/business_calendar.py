"""Business days and the deal's payment calendar (Art. I).

Adopted rule for "Business Day" (Art. I: not a Saturday or Sunday, nor a day on which banks in
New York, Chicago, Wilmington, Minneapolis or Richmond may close): the US Federal Reserve holiday
calendar. The Federal Reserve Banks close on the US federal holidays; a holiday that falls on a
Sunday closes the following Monday, and a holiday that falls on a Saturday closes nothing (the
Reserve Banks open on the Friday before, unlike the federal government's observance).
"""

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

import holidays

from dagster_project.deal import Deal


@lru_cache(maxsize=64)
def federal_reserve_holidays(year: int) -> frozenset[dt.date]:
    closed = set()
    # The calendar year's holidays and next New Year's Day, whose Sunday shift can land in `year`.
    for day in holidays.US(years=[year, year + 1], observed=False):
        if day.weekday() == 6:  # Sunday holiday: the Reserve Banks close on Monday
            day = day + dt.timedelta(days=1)
        if day.weekday() < 5 and day.year == year:
            closed.add(day)
    return frozenset(closed)


def is_business_day(day: dt.date) -> bool:
    return day.weekday() < 5 and day not in federal_reserve_holidays(day.year)


def next_business_day(day: dt.date) -> dt.date:
    """The day itself if it is a Business Day, otherwise the following Business Day."""
    while not is_business_day(day):
        day += dt.timedelta(days=1)
    return day


def previous_business_day(day: dt.date) -> dt.date:
    """The Business Day strictly before `day`."""
    day -= dt.timedelta(days=1)
    while not is_business_day(day):
        day -= dt.timedelta(days=1)
    return day


def add_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    last = month_end(dt.date(year, month, 1)).day
    return dt.date(year, month, min(day.day, last))


def month_end(day: dt.date) -> dt.date:
    first_next = dt.date(day.year + day.month // 12, day.month % 12 + 1, 1)
    return first_next - dt.timedelta(days=1)


def days_30_360(start: dt.date, end: dt.date) -> int:
    """30/360 (bond basis) day count from `start` to `end`."""
    d1 = min(start.day, 30)
    d2 = 30 if end.day == 31 and d1 == 30 else end.day
    return 360 * (end.year - start.year) + 30 * (end.month - start.month) + (d2 - d1)


@dataclass(frozen=True)
class PaymentPeriod:
    """One Distribution Date and the Collection Period and accrual periods behind it."""

    period_number: int
    collection_period: str  # YYYY-MM of the calendar month (the partition key)
    collection_period_start: dt.date  # first day inside the period (Art. I "Collection Period")
    collection_period_end: dt.date
    determination_date: dt.date  # Art. I: the 9th or the next Business Day
    distribution_date: dt.date  # Art. I: the 15th or the next Business Day
    record_date: dt.date  # Art. I: close of the Business Day before the Distribution Date
    accrual_start: dt.date  # actual/360: previous Distribution Date (or Closing Date), inclusive
    actual_days: int  # actual days from accrual_start to the Distribution Date, excl.
    thirty_360_start: dt.date  # 30/360: the previous 15th (or the Closing Date)
    thirty_360_days: int
    related_fiscal_quarter_end: dt.date  # Art. I "Related Fiscal Quarter" (lines 79-80)


def related_fiscal_quarter_end(distribution_date: dt.date, fiscal_year_end_month: int) -> dt.date:
    """Art. I "Related Fiscal Quarter": the latest fiscal quarter that ended at least three
    calendar months before the Distribution Date's month (Nov-Jan -> Aug, Feb-Apr -> Nov, ...)."""
    month = add_months(distribution_date.replace(day=1), -3)
    while (month.month - fiscal_year_end_month) % 3:
        month = add_months(month, -1)
    return month_end(month)


def payment_periods(deal: Deal, through: dt.date | None = None) -> list[PaymentPeriod]:
    """Every Distribution Date from the first to the Final Scheduled Maturity Date or `through`."""
    last = through or deal.final_scheduled_maturity_date
    periods: list[PaymentPeriod] = []
    month_start = deal.first_collection_period
    previous_distribution = deal.closing_date
    previous_nominal = deal.closing_date
    number = 1
    while True:
        pay_month = add_months(month_start, 1)
        nominal = pay_month.replace(day=deal.distribution_day_of_month)
        distribution = next_business_day(nominal)
        if distribution > last:
            break
        determination = next_business_day(pay_month.replace(day=deal.determination_day_of_month))
        start = deal.cutoff_date + dt.timedelta(days=1) if number == 1 else month_start
        periods.append(
            PaymentPeriod(
                period_number=number,
                collection_period=month_start.strftime("%Y-%m"),
                collection_period_start=start,
                collection_period_end=month_end(month_start),
                determination_date=determination,
                distribution_date=distribution,
                record_date=previous_business_day(distribution),
                accrual_start=previous_distribution,
                actual_days=(distribution - previous_distribution).days,
                thirty_360_start=previous_nominal,
                thirty_360_days=days_30_360(previous_nominal, nominal),
                related_fiscal_quarter_end=related_fiscal_quarter_end(
                    distribution, deal.fiscal_year_end_month
                ),
            )
        )
        previous_distribution, previous_nominal = distribution, nominal
        month_start = pay_month
        number += 1
    return periods


def period_for_collection_month(deal: Deal, collection_period: str) -> PaymentPeriod:
    for period in payment_periods(deal):
        if period.collection_period == collection_period:
            return period
    raise KeyError(f"{collection_period} is not a Collection Period of {deal.deal_id}")


def period_determined_on(deal: Deal, day: dt.date) -> PaymentPeriod | None:
    """The period whose Determination Date (Art. I: the 9th, or the next Business Day) is `day`."""
    for period in payment_periods(deal):
        if period.determination_date == day:
            return period
    return None
