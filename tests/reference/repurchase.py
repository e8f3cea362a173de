"""Section 2.4 and the Art. I "Purchase Amount", written from the agreement for the tests."""

import datetime as dt
from decimal import Decimal

from reference.loan_level import Account, interest


def repurchase_distribution_date(discovered: dt.date, cure_days: int, periods) -> dt.date:
    """2.4: not cured by the last day of the Collection Period that includes the 30th day after
    discovery, the receivable is repurchased on the Distribution Date right after that period."""
    deadline = discovered + dt.timedelta(days=cure_days)
    for period in periods:
        if period.collection_period_start <= deadline <= period.collection_period_end:
            return period.distribution_date
    raise ValueError(f"no Collection Period includes {deadline}")


def purchase_amount(
    schedule_row: dict, transactions: list[tuple[dt.date, str, Decimal]], distribution: dt.date
) -> tuple[Decimal, Decimal]:
    """(Principal Balance, accrued unpaid interest at the APR to but excluding `distribution`)
    after replaying the obligor's payments and rebates by the Simple Interest Method."""
    account = Account(
        apr=Decimal(schedule_row["apr"]),
        balance=Decimal(schedule_row["principal_balance"]),
        last_accrual=dt.date.fromisoformat(schedule_row["last_payment_date"]),
    )
    order = {"late_fee": 0, "rebate": 1, "payment": 2}
    for day, kind, amount in sorted(transactions, key=lambda t: (t[0], order[t[1]], t[2])):
        account.apply(kind, day, amount)
    accrued = interest(account.balance, account.apr, (distribution - account.last_accrual).days)
    return account.balance, account.unpaid_interest + accrued
