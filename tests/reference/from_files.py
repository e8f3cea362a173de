"""The plain-Python references end to end on a delivered deal folder: loan-level balances from
the tapes, then the certificate by the waterfall (what `make bench` times as the naive way)."""

import csv
import sys
from decimal import Decimal
from pathlib import Path

from dagster_project.business_calendar import payment_periods
from dagster_project.deal import load_deal
from reference import loan_level, waterfall


def _rows(path: Path, key: str) -> dict:
    with path.open(newline="") as handle:
        return {row[key]: row for row in csv.DictReader(handle)}


def certificate_from_files(inputs: Path, deal=None) -> dict:
    """The certificates of a trust (default the sample trust, 2015-4) from its delivered files
    under `inputs`."""
    deal = deal or load_deal()
    folder = inputs / deal.deal_id
    pool = loan_level.compute(folder, deal.defaulted_days_past_due, deal)
    rates = _rows(folder / "index_rates.csv", "distribution_date")
    earnings = _rows(folder / "trust_account_earnings.csv", "distribution_date")
    periods = []
    for period in payment_periods(deal):
        if period.collection_period not in pool.pool:
            break
        row = dict(pool.pool[period.collection_period])
        earned = earnings.get(str(period.distribution_date), {})
        row.update(
            distribution_date=period.distribution_date,
            period_number=period.period_number,
            actual_days=period.actual_days,
            thirty_360_days=period.thirty_360_days,
            initial_pool_balance=deal.initial_pool_balance,
            index_rate=Decimal(rates.get(str(period.distribution_date), {}).get("index_rate", "0")),
            collection_account_interest_amount=Decimal(
                earned.get("collection_account_interest", "0")
            ),
            reserve_investment_earnings_amount=Decimal(
                earned.get("reserve_account_investment_earnings", "0")
            ),
        )
        periods.append(row)
    return waterfall.run(deal, periods)


if __name__ == "__main__":
    print(len(certificate_from_files(Path(sys.argv[1]))), "Distribution Dates")
