"""Reference: Principal Balances, defaults, buckets and the pool roll-forward, from the agreement.

Written from the Sale and Servicing Agreement, not from the SQL: plain Python, Decimal money.
- Simple Interest Method (Art. I): interest = APR x Principal Balance x days / 365 since the
  preceding payment (or rebate), rounded half up to the cent; a payment pays interest, then late
  fees, then principal. Rebates reduce principal (Art. I "Principal Balance" (ii)).
- Defaulted Receivable (Art. I): 120+ days delinquent at a period end, repossessed and sold, or
  judged uncollectible; first period of such an event; never a Purchased Receivable; its
  Principal Balance is zero from that period end. Net Losses: defaulted principal less
  Liquidation Proceeds (net of expenses) received in the period.
"""

import csv
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
KIND_ORDER = {"late_fee": 0, "rebate": 1, "payment": 2}


def interest(balance: Decimal, apr: Decimal, days: int) -> Decimal:
    return (balance * apr * max(days, 0) / Decimal(365)).quantize(CENT, ROUND_HALF_UP)


@dataclass
class Account:
    apr: Decimal
    balance: Decimal
    last_accrual: dt.date
    unpaid_interest: Decimal = ZERO
    fees_due: Decimal = ZERO

    def apply(self, kind: str, day: dt.date, amount: Decimal) -> dict:
        """One transaction by the Simple Interest Method; returns its allocation."""
        if kind == "late_fee":
            self.fees_due += amount
            return {"interest": ZERO, "fees": ZERO, "principal": ZERO, "rebate": ZERO}
        self.unpaid_interest += interest(self.balance, self.apr, (day - self.last_accrual).days)
        self.last_accrual = day
        if kind == "rebate":
            principal = min(amount, self.balance)
            self.balance -= principal
            return {"interest": ZERO, "fees": ZERO, "principal": ZERO, "rebate": principal}
        to_interest = min(amount, self.unpaid_interest)
        self.unpaid_interest -= to_interest
        to_fees = min(amount - to_interest, self.fees_due)
        self.fees_due -= to_fees
        to_principal = min(amount - to_interest - to_fees, self.balance)
        self.balance -= to_principal
        return {"interest": to_interest, "fees": to_fees, "principal": to_principal, "rebate": ZERO}


def replay(account: Account, transactions: list[tuple[dt.date, str, Decimal]]) -> list[Decimal]:
    """Balances after each transaction, in the agreement's order."""
    ordered = sorted(transactions, key=lambda t: (t[0], KIND_ORDER[t[1]], t[2]))
    balances = []
    for day, kind, amount in ordered:
        account.apply(kind, day, amount)
        balances.append(account.balance)
    return balances


def _read(path: Path):
    with path.open(newline="") as handle:
        yield from csv.DictReader(handle)


def _date(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


@dataclass
class ReceivablePeriod:
    beginning_balance: Decimal
    ending_balance: Decimal
    interest: Decimal = ZERO
    principal: Decimal = ZERO
    rebate: Decimal = ZERO
    fees: Decimal = ZERO
    defaulted_principal: Decimal = ZERO
    purchase_principal: Decimal = ZERO
    liquidation: Decimal = ZERO
    bucket: str | None = None


@dataclass
class Deal:
    receivables: dict = field(default_factory=dict)  # (id, period) -> ReceivablePeriod
    pool: dict = field(default_factory=dict)  # period -> dict of figures


def bucket(days: int) -> str:
    if days == 0:
        return "current"
    if days <= 30:
        return "1-30"
    if days <= 60:
        return "31-60"
    if days <= 90:
        return "61-90"
    return "91+"


def compute(folder: Path, defaulted_days: int = 120) -> Deal:
    accounts = {}
    for row in _read(folder / "receivable_schedule.csv"):
        accounts[row["receivable_id"]] = Account(
            apr=Decimal(row["apr"]),
            balance=Decimal(row["principal_balance"]),
            last_accrual=_date(row["last_payment_date"]),
        )
    cutoff_pool = sum(a.balance for a in accounts.values())
    gone = set()
    deal = Deal()
    beginning_pool = cutoff_pool
    for period_dir in sorted((folder / "deliveries").iterdir()):
        period = period_dir.name
        flows = defaultdict(list)
        liquidation: dict[str, Decimal] = {}
        for row in _read(period_dir / "payment_transactions.csv"):
            amount = Decimal(row["transactionAmount"])
            kind = row["transactionType"]
            if kind in ("liquidation_proceeds", "liquidation_expense"):
                sign = 1 if kind == "liquidation_proceeds" else -1
                liquidation[row["assetNumber"]] = (
                    liquidation.get(row["assetNumber"], ZERO) + sign * amount
                )
            else:
                flows[row["assetNumber"]].append((_date(row["transactionDate"]), kind, amount))
        totals = defaultdict(lambda: ZERO)
        counts = defaultdict(int)
        for row in _read(period_dir / "loan_status.csv"):
            rid = row["assetNumber"]
            account = accounts[rid]
            begin = ZERO if rid in gone else account.balance
            record = ReceivablePeriod(beginning_balance=begin, ending_balance=ZERO)
            for day, kind, amount in sorted(
                flows[rid], key=lambda t: (t[0], KIND_ORDER[t[1]], t[2])
            ):
                allocation = account.apply(kind, day, amount)
                record.interest += allocation["interest"]
                record.principal += allocation["principal"]
                record.rebate += allocation["rebate"]
                record.fees += allocation["fees"]
            record.liquidation = liquidation.get(rid, ZERO)
            if rid not in gone:
                days = int(row["currentDelinquencyStatus"])
                status = row["loanStatus"]
                # (ii) repossessed and the vehicle sold: sale proceeds arrive in the period
                sold = row["repossessedIndicator"].lower() == "true" and rid in liquidation
                if status == "purchased":
                    record.purchase_principal = account.balance
                    gone.add(rid)
                elif days >= defaulted_days or sold or status in ("charged_off", "liquidated"):
                    record.defaulted_principal = account.balance
                    gone.add(rid)
                else:
                    record.ending_balance = account.balance
                    if account.balance > 0:
                        record.bucket = bucket(days)
            deal.receivables[(rid, period)] = record
            totals["principal"] += record.principal + record.rebate
            totals["purchase"] += record.purchase_principal
            totals["defaulted"] += record.defaulted_principal
            totals["ending"] += record.ending_balance
            totals["interest"] += record.interest
            totals["liquidation"] += record.liquidation
            if record.bucket:
                totals[f"balance_{record.bucket}"] += record.ending_balance
                counts[record.bucket] += 1
            if record.ending_balance > 0:
                counts["outstanding"] += 1
        deal.pool[period] = {
            "beginning_pool_balance": beginning_pool,
            "principal_collections_amount": totals["principal"],
            "purchase_principal_amount": totals["purchase"],
            "defaulted_receivables_amount": totals["defaulted"],
            "ending_pool_balance": totals["ending"],
            "receivables_outstanding": counts["outstanding"],
            "finance_charge_collections_amount": totals["interest"],
            "net_losses_amount": totals["defaulted"] - totals["liquidation"],
            "delinquent_31_60_balance": totals["balance_31-60"],
            "delinquent_61_90_balance": totals["balance_61-90"],
            "delinquent_91_plus_balance": totals["balance_91+"],
            "delinquent_31_60_count": counts["31-60"],
            "delinquent_61_90_count": counts["61-90"],
            "delinquent_91_plus_count": counts["91+"],
        }
        beginning_pool = totals["ending"]
    return deal
