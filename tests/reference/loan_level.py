"""Reference: Principal Balances, defaults, buckets and the pool roll-forward, from the agreement.

Written from the Sale and Servicing Agreement, not from the SQL: plain Python, Decimal money.
- Simple Interest Method (Art. I): interest = APR x Principal Balance x days / 365 since the
  preceding payment (or rebate), rounded half up to the cent; a payment pays interest, then late
  fees, then principal. Rebates reduce principal (Art. I "Principal Balance" (ii)).
- Defaulted Receivable (Art. I): 120+ days delinquent at a period end, repossessed and sold, or
  judged uncollectible; first period of such an event; never a Purchased Receivable; its
  Principal Balance is zero from that period end. Net Losses: defaulted principal less
  Liquidation Proceeds (net of expenses) received in the period.
- Liquidation Proceeds (Art. I) are all amounts received on a Defaulted Receivable: obligor
  payments after the period of default count there, not as collections. Amounts received on a
  Purchased Receivable after the period of its purchase are not Available Collections at all.
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
    purchase_interest: Decimal = ZERO
    liquidation: Decimal = ZERO
    liquidation_interest: Decimal = ZERO
    bucket: str | None = None


@dataclass
class Deal:
    receivables: dict = field(default_factory=dict)  # (id, period) -> ReceivablePeriod
    pool: dict = field(default_factory=dict)  # period -> dict of figures
    advance_exceptions: dict = field(default_factory=dict)  # period -> advances beyond 4.4(a)


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


def months_between(start: dt.date, end: dt.date) -> int:
    return max((end.year - start.year) * 12 + end.month - start.month, 0)


def weighted(total: Decimal, weights: Decimal, places: Decimal = CENT) -> Decimal | None:
    """A weighted average to `places`, half up; none for an empty pool (the certificate prints
    N/A)."""
    return (total / weights).quantize(places, ROUND_HALF_UP) if weights else None


def _advances(row, record, account, rid, advanced, ended, totals, counts) -> None:
    """4.4 and 4.2, one receivable-period, in the order things happen: the period's receipts
    first reimburse the advance outstanding (the Servicer retains them, 4.2), then the Servicer
    may advance at the period end, at most the interest scheduled for the period and not
    received (4.4(a)), only on a receivable outstanding, not defaulted and past due. An advance
    still unreimbursed when the receivable stops being outstanding is taken as unrecoverable
    then (Art. I "Unreimbursed Servicer Advance"), paid in the waterfall; so is one made later."""
    advance = Decimal(row.get("servicerAdvancedAmount") or "0")
    eligible = record.ending_balance > 0 and int(row["currentDelinquencyStatus"]) > 0
    limit = ZERO
    if eligible:
        days = _date(row["reportingPeriodEndingDate"]) - _date(row["reportingPeriodBeginningDate"])
        scheduled = interest(record.beginning_balance, account.apr, days.days + 1)
        limit = max(scheduled - record.interest, ZERO)
    if advance > limit:
        counts["advance_exceptions"] += 1
    if rid in ended:  # deposited on a receivable already settled: unrecoverable at once
        totals["advanced"] += advance
        totals["unreimbursed"] += advance
        return
    received = (
        record.interest + record.principal + record.rebate + record.liquidation
        + record.purchase_principal + record.purchase_interest
    )  # fmt: skip
    owed = advanced.pop(rid, ZERO)
    retained = min(owed, received)
    owed += advance - retained
    totals["advanced"] += advance
    totals["retained"] += retained
    if record.ending_balance == 0:
        ended.add(rid)
        totals["unreimbursed"] += owed
    elif owed:
        advanced[rid] = owed
        totals["outstanding_advances"] += owed  # of the receivables on the period's tape


def compute(folder: Path, defaulted_days: int = 120, deal=None) -> Deal:
    """The reference over a trust's delivered folder (<inputs>/<deal_id>: its schedule and one
    folder per period); `deal`: its deal file's terms (default 2015-4)."""
    periods = [
        (d.name, list(_read(d / "loan_status.csv")), list(_read(d / "payment_transactions.csv")))
        for d in sorted((folder / "deliveries").iterdir())
    ]
    return compute_rows(
        list(_read(folder / "receivable_schedule.csv")), periods, defaulted_days, deal
    )


def compute_rows(schedule_rows, periods, defaulted_days: int = 120, deal=None) -> Deal:
    """The reference over rows shaped like the delivered files (dicts of text)."""
    from dagster_project.business_calendar import payment_periods
    from dagster_project.deal import load_deal

    calendar = payment_periods(deal or load_deal())
    distribution = {p.collection_period: p.distribution_date for p in calendar}
    accounts, terms = {}, {}
    for row in schedule_rows:
        accounts[row["receivable_id"]] = Account(
            apr=Decimal(row["apr"]),
            balance=Decimal(row["principal_balance"]),
            last_accrual=_date(row["last_payment_date"]),
        )
        terms[row["receivable_id"]] = int(row["original_term"])
    gone: dict[str, str] = {}  # receivable -> "default" or "purchase", from that period end
    advanced: dict[str, Decimal] = {}  # Simple Interest Advances not yet reimbursed (4.4, 4.2)
    ended: set[str] = set()  # receivables no longer outstanding: their advances are settled
    deal = Deal()
    beginning_pool = sum(a.balance for a in accounts.values())
    cumulative_net = ZERO
    for period, status_rows, transaction_rows in periods:
        flows = defaultdict(list)
        liquidation: dict[str, Decimal] = {}
        liquidation_day: dict[str, dt.date] = {}
        for row in transaction_rows:
            amount = Decimal(row["transactionAmount"])
            kind, rid = row["transactionType"], row["assetNumber"]
            if kind in ("liquidation_proceeds", "liquidation_expense"):
                sign = 1 if kind == "liquidation_proceeds" else -1
                liquidation[rid] = liquidation.get(rid, ZERO) + sign * amount
                if kind == "liquidation_proceeds":
                    day = _date(row["transactionDate"])
                    liquidation_day[rid] = min(liquidation_day.get(rid, day), day)
            else:
                flows[rid].append((_date(row["transactionDate"]), kind, amount))
        totals = defaultdict(lambda: ZERO)
        counts = defaultdict(int)
        for row in status_rows:
            rid = row["assetNumber"]
            account = accounts[rid]
            record = ReceivablePeriod(
                beginning_balance=ZERO if rid in gone else account.balance, ending_balance=ZERO
            )
            receipts_after_default = ZERO
            for day, kind, amount in sorted(
                flows[rid], key=lambda t: (t[0], KIND_ORDER[t[1]], t[2])
            ):
                allocation = account.apply(kind, day, amount)
                if gone.get(rid) == "default":  # received on a Defaulted Receivable
                    receipts_after_default += sum(allocation.values())
                elif rid not in gone:
                    record.interest += allocation["interest"]
                    record.principal += allocation["principal"]
                    record.rebate += allocation["rebate"]
                    record.fees += allocation["fees"]
            if gone.get(rid) != "purchase":
                record.liquidation = liquidation.get(rid, ZERO) + receipts_after_default
            if rid not in gone:
                days = int(row["currentDelinquencyStatus"])
                status = row["loanStatus"]
                # (ii) repossessed and the vehicle sold: sale proceeds arrive in the period
                sold = row["repossessedIndicator"].lower() == "true" and rid in liquidation_day
                if status == "purchased":
                    # Art. I "Purchase Amount": balance plus interest to the Distribution Date
                    record.purchase_principal = account.balance
                    record.purchase_interest = account.unpaid_interest + interest(
                        account.balance,
                        account.apr,
                        (distribution[period] - account.last_accrual).days,
                    )
                    gone[rid] = "purchase"
                elif days >= defaulted_days or sold or status in ("charged_off", "liquidated"):
                    record.defaulted_principal = account.balance
                    if rid in liquidation_day:  # 4.3: interest accrued to the receipt first
                        due = account.unpaid_interest + interest(
                            account.balance,
                            account.apr,
                            (liquidation_day[rid] - account.last_accrual).days,
                        )
                        record.liquidation_interest = max(min(record.liquidation, due), ZERO)
                    gone[rid] = "default"
                else:
                    record.ending_balance = account.balance
                    if account.balance > 0:
                        record.bucket = bucket(days)
                        end = _date(row["reportingPeriodEndingDate"])
                        remaining = months_between(end, _date(row["loanMaturityDate"]))
                        totals["apr_weight"] += account.apr * 100 * account.balance
                        totals["term_weight"] += terms[rid] * account.balance
                        totals["remaining_weight"] += remaining * account.balance
            _advances(row, record, account, rid, advanced, ended, totals, counts)
            deal.receivables[(rid, period)] = record
            totals["principal"] += record.principal + record.rebate
            totals["purchase"] += record.purchase_principal
            totals["purchase_interest"] += record.purchase_interest
            totals["defaulted"] += record.defaulted_principal
            totals["ending"] += record.ending_balance
            totals["interest"] += record.interest
            totals["liquidation"] += record.liquidation
            totals["liquidation_interest"] += record.liquidation_interest
            totals["fees"] += record.fees
            if record.bucket:
                totals[f"balance_{record.bucket}"] += record.ending_balance
                counts[record.bucket] += 1
            if record.ending_balance > 0:
                counts["outstanding"] += 1
        deal.pool[period] = {
            "beginning_pool_balance": beginning_pool,
            "principal_collections_amount": totals["principal"],
            "purchase_principal_amount": totals["purchase"],
            "purchase_finance_charge_amount": totals["purchase_interest"],
            "defaulted_receivables_amount": totals["defaulted"],
            "ending_pool_balance": totals["ending"],
            "receivables_outstanding": counts["outstanding"],
            "finance_charge_collections_amount": totals["interest"],
            "liquidation_finance_charge_amount": totals["liquidation_interest"],
            "liquidation_principal_amount": totals["liquidation"] - totals["liquidation_interest"],
            "supplemental_servicing_fees_amount": totals["fees"],
            # Art. I "Net Losses": the excess, if any (never negative); line 76 the same excess
            # over every period to date
            "net_losses_amount": max(totals["defaulted"] - totals["liquidation"], ZERO),
            "cumulative_net_losses_amount": max(
                cumulative_net + totals["defaulted"] - totals["liquidation"], ZERO
            ),
            # kept to ten decimals in the mart; the certificate prints two
            "weighted_average_coupon_percent": weighted(
                totals["apr_weight"], totals["ending"], Decimal("1E-10")
            ),
            "weighted_average_original_term": weighted(totals["term_weight"], totals["ending"]),
            "weighted_average_remaining_term": weighted(
                totals["remaining_weight"], totals["ending"]
            ),
            "delinquent_31_60_balance": totals["balance_31-60"],
            "delinquent_61_90_balance": totals["balance_61-90"],
            "delinquent_91_plus_balance": totals["balance_91+"],
            "delinquent_31_60_count": counts["31-60"],
            "delinquent_61_90_count": counts["61-90"],
            "delinquent_91_plus_count": counts["91+"],
            "simple_interest_advances_deposited_amount": totals["advanced"],
            "simple_interest_advance_reimbursements_amount": totals["retained"],
            "simple_interest_advances_amount": totals["advanced"] - totals["retained"],
            "unreimbursed_servicer_advances_amount": totals["unreimbursed"],
            "outstanding_simple_interest_advances_amount": totals["outstanding_advances"],
        }
        deal.advance_exceptions[period] = counts["advance_exceptions"]
        beginning_pool = totals["ending"]
        cumulative_net += totals["defaulted"] - totals["liquidation"]
    return deal
