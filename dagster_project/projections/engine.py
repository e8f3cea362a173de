"""Project every receivable of a pool under scenarios, month by month, exactly.

Each receivable keeps paying its contractual level payment (the Receivable Schedule's scheduled
payment) while it performs: its contractual balance b(t) = b(t-1) + b(t-1) x APR/12 - payment,
all of it in the last month of its term, never below zero. Prepayments and defaults remove whole
shares of the receivables (the ABS convention counts receivables), so the expected balance of a
receivable is b(t) times the share still outstanding, S(t) = S(t-1) x (1 - MDR) x (1 - SMM), and
in month t:

    defaulted = S(t-1) x MDR x b(t-1)                     MDR = 1 - (1 - CDR)^(1/12)
    interest  = S(t-1) x (1 - MDR) x b(t-1) x APR/12
    scheduled = S(t-1) x (1 - MDR) x (b(t-1) - b(t))
    prepaid   = S(t-1) x (1 - MDR) x SMM x b(t)           SMM = ABS / (1 - ABS x (age - 1)),
    balance   = S(t) x b(t)                               age = months since the first payment

A pool of identical receivables at a fixed ABS speed thus keeps N0 x (1 - ABS x t) receivables,
each on its scheduled balance: the closed form behind the prospectus tables. S depends only on the
scenario and the receivable's age, so the contractual paths are computed once per pool (integer
millionths of a dollar, numpy int64: interest rounded half up to the millionth each month) and
summed by age, and each scenario is a Decimal sum over ages (`project`). Nothing is floating point.
A defaulted balance is recovered, less the severity, `recovery_lag_months` later (`pool_lines`).
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext

import numpy as np

from dagster_project.projections.scenarios import Scenario

UNIT = 1_000_000  # contractual balances in millionths of a dollar
CENT = Decimal("0.01")


@dataclass(frozen=True)
class Paths:
    """The pool's contractual paths summed by age: balance[a][t] (t = 0..T), interest[a][t]
    (t = 1..T, index 0 unused) in millionths of a dollar, count[a][t] receivables still in term."""

    ages: list[int]
    balance: np.ndarray
    interest: np.ndarray
    count: np.ndarray

    @property
    def months(self) -> int:
        return self.balance.shape[1] - 1


def contractual_paths(apr_e6, remaining, age, balance, payment) -> Paths:
    """From per-receivable arrays (APR in millionths, remaining term in months, age in months,
    balance and scheduled payment in millionths of a dollar, all integers)."""
    apr_e6, remaining, age = (np.asarray(a, dtype=np.int64) for a in (apr_e6, remaining, age))
    b, pay = np.asarray(balance, dtype=np.int64), np.asarray(payment, dtype=np.int64)
    keep = b > 0
    apr_e6, remaining, age, b, pay = (a[keep] for a in (apr_e6, remaining, age, b, pay))
    ages = sorted(set(age.tolist()))
    index = np.searchsorted(np.asarray(ages, dtype=np.int64), age)
    months = int(max(remaining.max(initial=0), 1))
    shape = (len(ages), months + 1)
    balances, interests, counts = (np.zeros(shape, dtype=np.int64) for _ in range(3))
    np.add.at(balances[:, 0], index, b)
    np.add.at(counts[:, 0], index, 1)
    for t in range(1, months + 1):
        interest = (b * apr_e6 + 6_000_000) // 12_000_000  # b x APR/12, half up (b >= 0)
        ended = remaining <= t  # this month is the last of the term: all of it is paid
        b_next = np.where(ended, 0, np.maximum(b + interest - pay, 0))
        np.add.at(interests[:, t], index, np.where(b > 0, interest, 0))
        np.add.at(balances[:, t], index, b_next)
        np.add.at(counts[:, t], index, (b_next > 0).astype(np.int64))
        b = b_next
    return Paths(ages, balances, interests, counts)


@dataclass(frozen=True)
class ProjectedMonth:
    month: int  # 1 = the first Collection Period after the start
    beginning: Decimal
    interest: Decimal
    scheduled: Decimal
    prepaid: Decimal
    defaulted: Decimal
    ending: Decimal
    receivables: Decimal  # expected number outstanding at the month end


def monthly_default_rate(cdr: Decimal) -> Decimal:
    """MDR from an annual CDR: 1 - (1 - CDR)^(1/12)."""
    with localcontext() as context:
        context.prec = 34
        return 1 - (1 - cdr) ** (Decimal(1) / 12)


def monthly_prepayment_rate(scenario: Scenario, age: int) -> Decimal:
    """SMM of a receivable in its `age`-th month since its first payment (age 1 = that month)."""
    with localcontext() as context:
        context.prec = 34
        rate = scenario.prepayment_rate
        if scenario.prepayment == "cpr":
            return 1 - (1 - rate) ** (Decimal(1) / 12)
        remaining = 1 - rate * (max(age, 1) - 1)
        return Decimal(1) if remaining <= rate else rate / remaining


def project(paths: Paths, scenario: Scenario) -> list[ProjectedMonth]:
    """The scenario's expected pool, month by month until it is paid down, unrounded (34-digit
    Decimal), in dollars."""
    mdr = monthly_default_rate(scenario.cdr)
    unit = Decimal(UNIT)
    share = [Decimal(1)] * len(paths.ages)
    out = []
    with localcontext() as context:
        context.prec = 34
        for t in range(1, paths.months + 1):
            totals = [Decimal(0)] * 7
            for a, age in enumerate(paths.ages):
                before, after = int(paths.balance[a, t - 1]), int(paths.balance[a, t])
                if not before:
                    continue
                performing = share[a] * (1 - mdr)
                smm = monthly_prepayment_rate(scenario, age + t)
                share_after = performing * (1 - smm)
                totals[0] += share[a] * before
                totals[1] += performing * int(paths.interest[a, t])
                totals[2] += performing * (before - after)
                totals[3] += performing * smm * after
                totals[4] += share[a] * mdr * before
                totals[5] += share_after * after
                totals[6] += share_after * int(paths.count[a, t])
                share[a] = share_after
            if not totals[0]:
                break
            out.append(ProjectedMonth(t, *(v / unit for v in totals[:6]), totals[6]))
    return out


@dataclass(frozen=True)
class PoolPeriod:
    """One projected Collection Period as the certificate's pool lines, in cents."""

    month: int
    beginning: Decimal  # line 1
    principal: Decimal  # lines 2 and 18a: scheduled and prepaid principal
    purchased: Decimal  # lines 3 and 18c: the clean-up call's Purchase Amount
    defaulted: Decimal  # line 4
    ending: Decimal  # line 5
    receivables: int  # line 6
    interest: Decimal  # line 17a
    recoveries: Decimal  # line 18b: Liquidation Proceeds of earlier defaults


def pool_lines(
    months: list[ProjectedMonth], scenario: Scenario, call_balance: Decimal | None
) -> list[PoolPeriod]:
    """The projected months in cents, each total rounded half up once (the roll-forward is kept
    exact: principal = beginning - defaulted - ending, so a rounding cent lands in the principal
    collections). `call_balance`: the clean-up call (9.1(a)) is exercised on the first month
    whose ending balance is at or below it (the servicer buys the pool at that balance; the
    projection ends); None when the deal has none. Recoveries still due after the last month are
    left out with the pool."""

    def cents(value: Decimal) -> Decimal:
        return value.quantize(CENT, ROUND_HALF_UP)

    recovered = {
        m.month + scenario.recovery_lag_months: m.defaulted * (1 - scenario.severity)
        for m in months
    }
    out = []
    for m in months:
        beginning, ending, defaulted = cents(m.beginning), cents(m.ending), cents(m.defaulted)
        called = scenario.clean_up_call and call_balance is not None and ending <= call_balance
        out.append(
            PoolPeriod(
                month=m.month,
                beginning=beginning,
                principal=beginning - defaulted - ending,
                purchased=ending if called else Decimal("0.00"),
                defaulted=defaulted,
                ending=Decimal("0.00") if called else ending,
                receivables=0 if called else int(m.receivables.quantize(1, ROUND_HALF_UP)),
                interest=cents(m.interest),
                recoveries=cents(recovered.get(m.month, Decimal(0))),
            )
        )
        if called:
            break
    return out
