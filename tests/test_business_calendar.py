import datetime as dt
from decimal import Decimal

import pytest

from dagster_project.business_calendar import (
    days_30_360,
    is_business_day,
    next_business_day,
    payment_periods,
)
from dagster_project.deal import load_deal
from dagster_project.generator.market_inputs import implied_first_libor
from dagster_project.money import round_cents

D = dt.date


@pytest.fixture(scope="module")
def deal():
    return load_deal()


@pytest.fixture(scope="module")
def periods(deal):
    return payment_periods(deal)


def test_first_determination_and_distribution_dates_match_article_one(periods):
    assert periods[0].determination_date == D(2015, 11, 9)
    assert periods[0].distribution_date == D(2015, 11, 16)  # the 15th was a Sunday
    assert periods[0].collection_period_start == D(2015, 10, 1)  # from but excluding the cutoff
    assert periods[0].collection_period_end == D(2015, 10, 31)


@pytest.mark.parametrize(
    "nominal, expected",
    [
        (D(2016, 10, 15), D(2016, 10, 17)),  # Class A-1 Final Distribution Date (Saturday)
        (D(2019, 4, 15), D(2019, 4, 15)),  # Class A-2 Final Distribution Date
        (D(2020, 11, 15), D(2020, 11, 16)),  # Class A-3 Final Distribution Date (Sunday)
        (D(2021, 6, 15), D(2021, 6, 15)),  # Class A-4
        (D(2021, 8, 15), D(2021, 8, 16)),  # Class B (Sunday)
        (D(2021, 10, 15), D(2021, 10, 15)),  # Class C
        (D(2022, 5, 15), D(2022, 5, 16)),  # Class D and Final Scheduled Maturity Date (Sunday)
        (D(2016, 2, 15), D(2016, 2, 16)),  # Washington's Birthday on the 15th
        (D(2018, 1, 15), D(2018, 1, 16)),  # Martin Luther King Jr. Day on the 15th
        (D(2017, 10, 9), D(2017, 10, 10)),  # Columbus Day on a Determination Date
        (D(2016, 1, 9), D(2016, 1, 11)),  # 2014-4's Determination Date (reference certificate)
    ],
)
def test_next_business_day_matches_the_agreements_dates(nominal, expected):
    assert next_business_day(nominal) == expected


def test_saturday_holiday_does_not_close_the_federal_reserve_on_friday():
    # 2021-12-25 and 2022-01-01 fell on Saturdays: the Reserve Banks opened on the Fridays.
    assert is_business_day(D(2021, 12, 24))
    assert is_business_day(D(2021, 12, 31))
    # A Sunday holiday closes the Monday (Independence Day 2021 -> 2021-07-05).
    assert not is_business_day(D(2021, 7, 5))
    assert not is_business_day(D(2016, 12, 26))


def test_record_date_is_the_business_day_before_the_distribution_date(periods):
    assert periods[0].record_date == D(2015, 11, 13)
    for period in periods:
        assert period.record_date < period.distribution_date
        assert is_business_day(period.record_date)


def test_accrual_periods_run_from_the_previous_distribution_date(periods):
    assert periods[0].accrual_start == D(2015, 10, 28)  # Closing Date
    assert periods[0].actual_days == 19
    assert periods[0].thirty_360_days == 17
    for previous, current in zip(periods, periods[1:], strict=False):
        assert current.accrual_start == previous.distribution_date
        assert current.thirty_360_days == 30


def test_30_360_day_count():
    assert days_30_360(D(2015, 10, 28), D(2015, 11, 15)) == 17
    assert days_30_360(D(2016, 1, 31), D(2016, 2, 29)) == 29
    assert days_30_360(D(2016, 1, 15), D(2016, 2, 15)) == 30


ARTICLE_ONE_FIRST_PERIOD = {
    "A-1": Decimal("39678.33"),
    "A-2a": Decimal("99341.39"),
    "A-2b": Decimal("78602.15"),
    "A-3": Decimal("240890.00"),
    "A-4": Decimal("78008.33"),
    "B": Decimal("19818.60"),
    "C": Decimal("26031.25"),
    "D": Decimal("37187.50"),
}


def test_first_period_interest_comes_out_of_rate_balance_and_day_count(deal, periods):
    first = periods[0]
    libor = implied_first_libor(deal, first)
    assert libor == Decimal("0.0017166")
    for note_class in deal.classes:
        rate = note_class.rate if note_class.rate_type == "fixed" else libor + note_class.spread
        days = first.actual_days if note_class.day_count == "actual/360" else first.thirty_360_days
        amount = round_cents(note_class.initial_balance * rate * days / 360)
        assert amount == ARTICLE_ONE_FIRST_PERIOD[note_class.class_id], note_class.class_id
        assert note_class.first_period_interest == amount
