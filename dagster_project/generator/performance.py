"""Month-by-month life of the pool: payments, delinquency, extensions, defaults, recoveries.

All receivables move in lockstep one Collection Period at a time (numpy arrays), so the full-size
deal simulates in seconds. Every balance follows the agreement's allocation, so the servicer's
reported balances agree with an independent Simple Interest recomputation:

- Simple Interest Method (Art. I): interest accrues at APR x Principal Balance x actual days / 365
  between balance-changing events (payments and rebates), rounded half up to the cent at each event.
  A payment pays accrued interest first, then assessed late fees, then principal.
- Rebates of financed items reduce principal directly (Art. I "Principal Balance" (ii)).
- Defaulted Receivable (Art. I): 120+ days past due at a period end, repossessed and sold, or
  judged uncollectible (bankruptcy); its Principal Balance is zero from that period end.
- Extensions (3.2): one month at a time, never past the Final Scheduled Maturity Date.
- Repurchase (2.4): the planted Section 2.3 breaches are discovered on the Closing Date and
  repurchased at the end of the Collection Period that includes the 30th day after discovery,
  for their Purchase Amount (Principal Balance plus interest to but excluding the Distribution
  Date).
"""

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dagster_project.business_calendar import PaymentPeriod, add_months
from dagster_project.deal import Deal
from dagster_project.generator.arrays import day_number, div_half_up, due_dates, month_index

STATUS_ACTIVE, STATUS_PAID, STATUS_DEFAULTED, STATUS_PURCHASED = 0, 1, 2, 3
TRANSACTION_ORDER = {
    "late_fee": 0,
    "rebate": 1,
    "payment": 2,
    "liquidation_proceeds": 3,
    "liquidation_expense": 4,
}
MAX_EXTENSIONS = 6


@dataclass
class PeriodTape:
    period: PaymentPeriod
    loan_status: pd.DataFrame
    transactions: pd.DataFrame


ADVANCE_EVERY = 4  # the Servicer makes Simple Interest Advances in every fourth Collection Period


def _accrue(balance, apr_e6, days):
    """Simple interest for `days` days, rounded half up to the cent (Art. I)."""
    return div_half_up(balance * apr_e6 * np.maximum(days, 0), 365_000_000)


class PoolSimulation:
    def __init__(self, deal: Deal, schedule, rng: np.random.Generator):
        s = schedule.state
        self.deal, self.rng = deal, rng
        self.ids = schedule.frame["receivable_id"].to_numpy()
        self.n = n = len(self.ids)
        self.apr = s["apr_e6"].copy()
        self.pay = s["pay"].copy()
        self.term = s["orig_term"].copy()
        self.first_due_day = s["first_due_day"].copy()
        self.first_due_month = s["first_due_month"].copy()
        self.origination = s["origination"].copy()
        self.balance = s["balance"].copy()
        self.paid = s["payments_made"].copy()
        self.last_accrual = s["last_payment"].copy()
        self.maturity = s["maturity"].copy()
        self.carry = np.zeros(n, dtype=np.int64)  # accrued, unpaid interest
        self.fees_due = np.zeros(n, dtype=np.int64)  # assessed, unpaid late fees
        self.extensions = np.zeros(n, dtype=np.int64)
        self.status = np.zeros(n, dtype=np.int64)
        self.days_past_due = s["days_past_due"].copy()
        self.repo_day = np.full(n, -1, dtype=np.int64)
        self.sale_month = np.full(n, -1, dtype=np.int64)
        self.sale_ratio = rng.uniform(0.42, 0.70, size=n)
        self.bankrupt = np.zeros(n, dtype=bool)
        self.defaulted_balance = np.zeros(n, dtype=np.int64)
        self.default_status = np.full(n, "", dtype=object)
        self.recovery_left = np.zeros(n, dtype=np.int64)  # deficiency recoveries still to come
        self.recovery_amount = np.zeros(n, dtype=np.int64)
        self.purchase_month = np.full(n, -1, dtype=np.int64)
        closing = deal.closing_date
        discovered_plus = closing + dt.timedelta(days=deal.repurchase_cure_days)
        rows = [b["row"] for b in schedule.breaches]
        self.purchase_month[rows] = month_index(discovered_plus)  # 2.4
        # A planted "no payment made" receivable has its next installment due from the first one.
        self.final_month = month_index(deal.final_scheduled_maturity_date) - 1

    # -- helpers -----------------------------------------------------------------------------
    def _due(self, installment):
        return due_dates(self.first_due_day, self.first_due_month + self.extensions, installment)

    def _apply_payment(self, mask, day, amount):
        """Simple Interest Method allocation of `amount` paid on `day` for loans in `mask`."""
        accrued = _accrue(self.balance, self.apr, day - self.last_accrual)
        carry = np.where(mask, self.carry + accrued, self.carry)
        to_interest = np.where(mask, np.minimum(amount, carry), 0)
        rest = np.where(mask, amount - to_interest, 0)
        to_fees = np.minimum(rest, self.fees_due)
        rest -= to_fees
        to_principal = np.minimum(rest, self.balance)
        self.carry = carry - to_interest
        self.fees_due -= to_fees
        self.balance -= to_principal
        self.last_accrual = np.where(mask, day, self.last_accrual)
        return to_interest, to_fees, to_principal

    def _apply_rebate(self, mask, day, amount):
        """A rebate reduces principal by at most half the balance it applies to: it never pays
        a receivable off (the interest accrued to its day would be left owing on a zero
        balance, and a receivable with no balance is not outstanding)."""
        accrued = _accrue(self.balance, self.apr, day - self.last_accrual)
        self.carry = np.where(mask, self.carry + accrued, self.carry)
        self.last_accrual = np.where(mask, day, self.last_accrual)
        to_principal = np.where(mask, np.minimum(amount, self.balance // 2), 0)
        self.balance -= to_principal
        return to_principal

    def payoff_amount(self, day):
        return (
            self.balance
            + self.carry
            + self.fees_due
            + _accrue(self.balance, self.apr, day - self.last_accrual)
        )

    # -- one Collection Period ---------------------------------------------------------------
    def run_period(self, period: PaymentPeriod) -> PeriodTape:
        rng, n = self.rng, self.n
        start, end = (
            day_number(period.collection_period_start),
            day_number(period.collection_period_end),
        )
        month = month_index(period.collection_period_end)
        active = self.status == STATUS_ACTIVE
        begin_balance = self.balance.copy()
        was_defaulted_before = self.status == STATUS_DEFAULTED
        dpd_start = self.days_past_due.copy()
        repossessed = active & (self.repo_day >= 0)

        # Installments owed by the period end and this month's due date.
        k_month = month - (self.first_due_month + self.extensions)
        due_this_month = self._due(np.maximum(k_month, 0))
        owed = np.clip(k_month + 1 - self.paid, 0, np.maximum(self.term - self.paid, 0))
        matured_with_balance = active & (self.paid >= self.term) & (self.balance > 0)

        u = rng.random(n)
        smm = 0.0105 + 0.0045 * np.clip((month - month_index(self.deal.cutoff_date)) / 30, 0, 1)
        current = active & ~repossessed & (dpd_start == 0)
        behind = active & ~repossessed & (dpd_start > 0)
        prepay = current & (u < smm)
        miss = current & ~prepay & (u < smm + 0.015) & ~matured_with_balance
        installments = np.where(current & ~prepay & ~miss, owed, 0)
        u2 = rng.random(n)
        installments = np.where(
            behind & (u2 < 0.40),
            owed,
            np.where(behind & (u2 < 0.72), np.minimum(owed, 1), installments),
        )
        final_payoff = (
            active & ~repossessed & (installments > 0) & (self.paid + installments >= self.term)
        ) | (matured_with_balance & ~miss)
        full = prepay | final_payoff
        paying = full | (installments > 0)

        # Payment day: around the due date when current, any day when catching up.
        offset = rng.integers(-6, 10, size=n)
        late = rng.random(n) < 0.07
        offset = np.where(late, rng.integers(11, 21, size=n), offset)
        pay_day = np.where(
            current, due_this_month + offset, start + rng.integers(0, end - start + 1, n)
        )
        pay_day = np.where(prepay, start + rng.integers(0, end - start + 1, n), pay_day)
        pay_day = np.clip(pay_day, np.maximum(start, self.last_accrual), end)

        # Late fee (a Supplemental Servicing Fee): assessed 11 days after a missed due date.
        fee_day = due_this_month + 11
        fee = (
            active
            & ~repossessed
            & (owed > 0)
            & (fee_day <= end)
            & (fee_day >= start)
            & (~paying | (pay_day > fee_day))
            & ~full
        )
        fee_amount = np.where(fee, np.clip(self.pay * 5 // 100, 1_000, 3_500), 0)
        self.fees_due += fee_amount

        # Rebate of a financed item (service contract, GAP): reduces principal (Art. I).
        rebate = active & ~repossessed & (rng.random(n) < 0.0025) & (self.balance > 50_000)
        rebate_day = start + rng.integers(0, end - start + 1, n)
        rebate_day = np.maximum(rebate_day, self.last_accrual)
        rebate_amount = np.where(
            rebate, np.minimum(rng.integers(15_000, 180_000, n), self.balance // 2), 0
        )

        interest = np.zeros(n, dtype=np.int64)
        fees_paid = np.zeros(n, dtype=np.int64)
        principal = np.zeros(n, dtype=np.int64)
        rebate_principal = np.zeros(n, dtype=np.int64)
        payment_amount = np.zeros(n, dtype=np.int64)
        extra = np.where(
            current & ~full & (rng.random(n) < 0.015),
            self.balance * rng.integers(5, 26, n) // 100,
            0,
        )
        rebate_first = rebate & (~paying | (rebate_day <= pay_day))
        for slot in ("rebate_first", "payment", "rebate_after"):
            if slot == "payment":
                due_amount = installments * self.pay + np.where(installments > 0, self.fees_due, 0)
                amount = np.where(full, self.payoff_amount(pay_day), due_amount + extra)
                amount = np.minimum(amount, self.payoff_amount(pay_day))
                payment_amount = np.where(paying, amount, 0)
                i, f, p = self._apply_payment(paying, pay_day, payment_amount)
                interest, fees_paid, principal = i, f, p
                self.paid = np.where(paying, self.paid + installments, self.paid)
            else:
                mask = rebate_first if slot == "rebate_first" else rebate & ~rebate_first
                rebate_day = np.where(mask, np.maximum(rebate_day, self.last_accrual), rebate_day)
                rebate_principal += self._apply_rebate(mask, rebate_day, rebate_amount)
        rebate_amount = np.where(rebate, rebate_principal, 0)
        rebate = rebate & (rebate_amount > 0)

        paid_off = active & (self.balance == 0) & (self.carry == 0)
        self.fees_due = np.where(paid_off, 0, self.fees_due)

        # Extensions (3.2) at month end for obligors two or more installments behind.
        owed_end = np.clip(k_month + 1 - self.paid, 0, None)
        new_maturity_month = month_index_array(self.maturity) + 1
        extend = (
            active
            & ~paid_off
            & ~repossessed
            & (owed_end >= 2)
            & (self.extensions < MAX_EXTENSIONS)
            & (new_maturity_month <= self.final_month)
            & (rng.random(n) < 0.06)
        )
        self.extensions += extend
        self.maturity = np.where(extend, self._due(self.term - 1), self.maturity)

        # Days past due at the period end: from the oldest unpaid due date.
        next_due = self._due(np.minimum(self.paid, self.term - 1))
        past_due = np.where(
            self.paid >= self.term, np.where(self.balance > 0, self.maturity, end), next_due
        )
        dpd = np.where(active & ~paid_off, np.maximum(0, end - past_due), 0)
        self.days_past_due = np.where(active, dpd, self.days_past_due)

        # Repossession of seriously delinquent accounts; the vehicle is sold one or two months on.
        repo = active & ~paid_off & ~repossessed & (dpd_start >= 55) & (rng.random(n) < 0.27)
        self.repo_day = np.where(repo, start + rng.integers(0, end - start + 1, n), self.repo_day)
        self.sale_month = np.where(repo, month + rng.integers(1, 3, n), self.sale_month)
        sold = active & repossessed & (self.sale_month == month)

        # Bankruptcy; some bankrupt accounts are judged uncollectible at once (Art. I (iii)).
        files = active & ~paid_off & ~self.bankrupt & (rng.random(n) < 0.0004)
        self.bankrupt |= files
        uncollectible = files & (rng.random(n) < 0.4)

        purchased = active & ~paid_off & (self.purchase_month == month)
        defaulted = (
            active
            & ~paid_off
            & ~purchased
            & ((dpd >= self.deal.defaulted_days_past_due) | sold | uncollectible)
        )

        # Liquidation Proceeds: sale of the vehicle, net of expenses (Art. I), now or later.
        sale_now = sold | (was_defaulted_before & (self.sale_month == month))
        basis = np.where(sold, self.balance, self.defaulted_balance)
        gross = np.where(sale_now, (basis * self.sale_ratio).astype(np.int64), 0)
        expense = np.where(sale_now, rng.integers(25_000, 90_000, n), 0)
        expense = np.minimum(expense, gross)
        deficiency = was_defaulted_before & (self.recovery_left > 0) & (self.sale_month < month)
        gross = gross + np.where(deficiency, self.recovery_amount, 0)
        self.recovery_left -= deficiency
        self.sale_month = np.where(sale_now, -1, self.sale_month)  # sold: no sale pending
        liquidation_day = start + rng.integers(0, end - start + 1, n)
        if sold.any():
            liquidation_day = np.where(
                sold, np.maximum(liquidation_day, self.repo_day + 1), liquidation_day
            )
            liquidation_day = np.minimum(liquidation_day, end)

        # Purchase Amount: Principal Balance plus interest to but excluding the Distribution Date.
        distribution = day_number(period.distribution_date)
        purchase_amount = np.where(
            purchased,
            self.balance
            + self.carry
            + _accrue(self.balance, self.apr, distribution - self.last_accrual),
            0,
        )

        end_status = np.full(n, "", dtype=object)
        end_status[active] = "current"
        end_status[active & (dpd > 0)] = "delinquent"
        end_status[active & (self.repo_day >= 0)] = "repossessed"
        end_status[paid_off] = "paid_in_full"
        end_status[purchased] = "purchased"
        end_status[defaulted] = "charged_off"
        end_status[defaulted & sold] = "liquidated"
        end_status[was_defaulted_before] = self.default_status[was_defaulted_before]

        charged_off = np.where(defaulted, self.balance, 0)
        self.defaulted_balance = np.where(defaulted, self.balance, self.defaulted_balance)
        self.default_status = np.where(defaulted, end_status, self.default_status)
        # After default, a later sale if the vehicle was not sold, else deficiency collections.
        later_sale = defaulted & ~sold & ((self.sale_month > month) | (rng.random(n) < 0.62))
        self.sale_month = np.where(
            later_sale & (self.sale_month <= month), month + rng.integers(1, 4, n), self.sale_month
        )
        self.sale_month = np.where(defaulted & ~sold & ~later_sale, -1, self.sale_month)
        self.recovery_left = np.where(
            defaulted & ~later_sale & ~sold, rng.integers(0, 4, n), self.recovery_left
        )
        self.recovery_amount = np.where(
            defaulted, self.balance * rng.integers(3, 8, n) // 100, self.recovery_amount
        )
        ending_balance = np.where(active & ~defaulted & ~purchased, self.balance, 0)
        self.status = np.where(paid_off, STATUS_PAID, self.status)
        self.status = np.where(defaulted, STATUS_DEFAULTED, self.status)
        self.status = np.where(purchased, STATUS_PURCHASED, self.status)
        self.balance = np.where(defaulted | purchased, 0, self.balance)

        # Simple Interest Advances (4.4(a)), the Servicer's option, taken in every
        # ADVANCE_EVERY-th Collection Period: for each receivable outstanding at the period end,
        # not defaulted and past due, the interest scheduled for the period on its beginning
        # balance less the interest received (the warehouse recomputes the limit and the
        # reimbursements: int_receivable_period__simple_interest_advances)
        advancing = period.period_number % ADVANCE_EVERY == 0
        eligible = active & ~defaulted & ~purchased & (ending_balance > 0) & (dpd > 0)
        scheduled = _accrue(begin_balance, self.apr, np.full(n, end - start + 1))
        advance = np.where(eligible & advancing, np.maximum(scheduled - interest, 0), 0)

        recovery_row = was_defaulted_before & (gross > 0)
        in_tape = active | recovery_row
        idx = np.flatnonzero(in_tape)
        columns = {
            "begin": begin_balance, "ending": ending_balance, "paid": payment_amount,
            "interest": interest, "fees": fees_paid, "principal": principal,
            "rebate": rebate_amount, "status": end_status, "charged_off": charged_off,
            "gross": gross, "expense": expense, "purchase_amount": purchase_amount,
            "extend": extend, "advance": advance,
        }  # fmt: skip
        loan_status = self._status_frame(idx, period, columns)
        liquidating = gross > 0
        transactions = self._transactions((
            ("late_fee", fee, fee_day, fee_amount),
            ("rebate", rebate, rebate_day, rebate_amount),
            ("payment", paying & (payment_amount > 0), pay_day, payment_amount),
            ("liquidation_proceeds", liquidating, liquidation_day, gross),
            ("liquidation_expense", liquidating & (expense > 0), liquidation_day, expense),
        ))  # fmt: skip
        return PeriodTape(period=period, loan_status=loan_status, transactions=transactions)

    def _status_frame(self, idx, period, columns):
        """The loan-level status file rows of the receivables `idx` (Schedule AL names)."""
        zero_code = np.full(len(idx), "", dtype=object)
        st = columns["status"][idx]
        zero_code[st == "paid_in_full"] = "1"
        zero_code[st == "purchased"] = "3"
        zero_code[(st == "charged_off") | (st == "liquidated")] = "4"
        days = lambda a: np.asarray(a, dtype="datetime64[D]")  # noqa: E731
        return pd.DataFrame(
            {
                "assetNumber": self.ids[idx],
                "reportingPeriodBeginningDate": period.collection_period_start,
                "reportingPeriodEndingDate": period.collection_period_end,
                "reportingPeriodBeginningLoanBalanceAmount": columns["begin"][idx],
                "reportingPeriodActualEndBalanceAmount": columns["ending"][idx],
                "reportingPeriodScheduledPaymentAmount": self.pay[idx],
                "totalActualAmountPaid": columns["paid"][idx] + columns["rebate"][idx],
                "actualInterestCollectedAmount": columns["interest"][idx],
                "actualPrincipalCollectedAmount": columns["principal"][idx],
                "actualOtherCollectedAmount": columns["fees"][idx],
                "rebateAmount": columns["rebate"][idx],
                "currentDelinquencyStatus": self.days_past_due[idx],
                "loanStatus": st,
                "zeroBalanceCode": zero_code,
                "chargedoffPrincipalAmount": columns["charged_off"][idx],
                "recoveredAmount": columns["gross"][idx],
                "liquidationExpenseAmount": columns["expense"][idx],
                "repossessedIndicator": self.repo_day[idx] >= 0,
                "repossessionDate": np.where(
                    self.repo_day[idx] >= 0, days(self.repo_day[idx]), np.datetime64("NaT")
                ),
                "repurchaseAmount": columns["purchase_amount"][idx],
                "paymentExtendedNumber": self.extensions[idx],
                "extensionGrantedIndicator": columns["extend"][idx],
                "obligorBankruptcyIndicator": self.bankrupt[idx],
                "interestPaidThroughDate": days(self.last_accrual[idx]),
                "loanMaturityDate": days(self.maturity[idx]),
                "remainingTermToMaturityNumber": np.maximum(self.term[idx] - self.paid[idx], 0),
                "servicerAdvancedAmount": columns["advance"][idx],
            }
        )

    def _transactions(self, events):
        """The transaction file rows: (kind, mask, day, amount) arrays per kind of event."""
        parts = []
        for kind, mask, day, amount in events:
            idx = np.flatnonzero(mask)
            parts.append(
                pd.DataFrame(
                    {
                        "assetNumber": self.ids[idx],
                        "transactionDate": np.asarray(day[idx], dtype="datetime64[D]"),
                        "transactionType": kind,
                        "transactionAmount": amount[idx],
                        "_order": TRANSACTION_ORDER[kind],
                    }
                )
            )
        frame = pd.concat(parts, ignore_index=True)
        frame = frame.sort_values(["assetNumber", "transactionDate", "_order"], kind="stable")
        return frame.drop(columns="_order").reset_index(drop=True)

    def remaining(self) -> int:
        pending = (self.status == STATUS_DEFAULTED) & (
            (self.sale_month >= 0) | (self.recovery_left > 0)
        )
        return int((self.status == STATUS_ACTIVE).sum() + pending.sum())


def month_index_array(days: np.ndarray) -> np.ndarray:
    months = np.asarray(days, dtype="datetime64[D]").astype("datetime64[M]").astype(np.int64)
    return months + 1970 * 12


def simulate(deal: Deal, schedule, periods: list[PaymentPeriod], rng) -> Iterator[PeriodTape]:
    """Yield one tape per Collection Period until the pool has paid down and recoveries end."""
    simulation = PoolSimulation(deal, schedule, rng)
    for period in periods:
        yield simulation.run_period(period)
        if simulation.remaining() == 0:
            break


__all__ = ["PeriodTape", "simulate", "add_months"]
