"""The Receivable Schedule (Schedule 1) as of the cutoff date, calibrated to a CarMax prime pool."""

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dagster_project.deal import Deal
from dagster_project.generator.arrays import (
    day_number,
    div_half_up,
    due_dates,
    level_payment_cents,
    month_index,
)
from dagster_project.money import decimal_to_cents

# Obligor states (50 States and DC) weighted roughly like CarMax's store footprint.
STATES = (
    "CA",
    "TX",
    "FL",
    "GA",
    "NC",
    "VA",
    "IL",
    "OH",
    "TN",
    "AZ",
    "CO",
    "SC",
    "MD",
    "PA",
    "NY",
    "NJ",
    "IN",
    "AL",
    "WA",
    "MO",
    "NV",
    "OK",
    "KS",
    "LA",
    "MS",
    "KY",
    "MI",
    "NM",
    "UT",
    "OR",
    "MN",
    "WI",
    "CT",
    "MA",
    "NE",
    "IA",
    "AR",
    "ID",
    "DE",
    "DC",
    "NH",
    "RI",
    "ME",
    "VT",
    "WV",
    "MT",
    "ND",
    "SD",
    "WY",
    "HI",
    "AK",
)
STATE_WEIGHTS = np.array(
    [
        11,
        10,
        9,
        6,
        6,
        6,
        4,
        4,
        4,
        3.5,
        3,
        3,
        3,
        3,
        3,
        2.5,
        2.5,
        2,
        2,
        2,
        2,
        2,
        1.5,
        1.5,
        1.5,
        1.2,
        1.2,
        1.0,
        1.0,
        0.9,
        0.9,
        0.8,
        0.8,
        0.7,
        0.6,
        0.6,
        0.5,
        0.5,
        0.4,
        0.4,
        0.3,
        0.3,
        0.3,
        0.3,
        0.3,
        0.2,
        0.2,
        0.2,
        0.2,
        0.1,
        0.1,
    ]
)
MAKES = (
    "TOYOTA",
    "HONDA",
    "NISSAN",
    "FORD",
    "CHEVROLET",
    "HYUNDAI",
    "KIA",
    "JEEP",
    "DODGE",
    "BMW",
    "MERCEDES-BENZ",
    "VOLKSWAGEN",
    "SUBARU",
    "MAZDA",
    "LEXUS",
    "GMC",
    "CHRYSLER",
    "ACURA",
    "INFINITI",
    "AUDI",
    "BUICK",
    "CADILLAC",
    "RAM",
    "MITSUBISHI",
)
FIRST_NAMES = (
    "JAMES",
    "MARY",
    "ROBERT",
    "PATRICIA",
    "JOHN",
    "JENNIFER",
    "MICHAEL",
    "LINDA",
    "DAVID",
    "ELIZABETH",
    "MARIA",
    "LUIS",
)
LAST_NAMES = (
    "SMITH",
    "JOHNSON",
    "WILLIAMS",
    "BROWN",
    "JONES",
    "GARCIA",
    "MILLER",
    "DAVIS",
    "RODRIGUEZ",
    "MARTINEZ",
    "LEE",
)
STREETS = (
    "MAIN",
    "OAK",
    "PINE",
    "MAPLE",
    "CEDAR",
    "ELM",
    "WASHINGTON",
    "LAKE",
    "HILL",
    "PARK",
)
TERMS = np.array([24, 30, 36, 42, 48, 54, 60, 66, 72])
TERM_WEIGHTS = np.array([0.4, 0.3, 2.0, 1.5, 5.5, 3.0, 17.0, 22.0, 48.3])

# Section 2.3 breaches planted in the sample pool: representation -> how the receivable breaches it.
BREACH_KINDS = (
    ("2.3(a)(iii)", "level_payment", "scheduled payment does not amortise the Amount Financed"),
    ("2.3(a)(vi)", "not_repossessed", "financed vehicle repossessed as of the cutoff date"),
    ("2.3(a)(vii)", "simple_interest", "precomputed (not simple interest) receivable"),
    ("2.3(a)(viii)", "payment_made", "obligor has made no payment as of the cutoff date"),
    ("2.3(a)(ix)", "obligor_state", "obligor mailing address outside the 50 States and DC"),
    ("2.3(e)", "government_obligor", "receivable due from a government agency"),
    ("2.3(k)", "days_past_due", "payment more than 30 days past due at the cutoff date"),
    ("2.3(q)", "principal_balance", "Principal Balance below $500 at the cutoff date"),
    ("2.3(r)", "bankrupt_obligor", "obligor in bankruptcy at the cutoff date"),
    ("2.3(t)", "origination_date", "originated on or before the deal file's 2.3(t) date"),
    ("2.3(u)", "original_term", "original term longer than 72 months"),
    ("2.3(u)", "remaining_term", "remaining term shorter than 3 months"),
    ("2.3(w)", "apr", "APR above 25.00%"),
)
BREACHES_PER_KIND = 3


@dataclass
class Schedule:
    """Schedule columns as numpy arrays (cents, APR in millionths, dates as day numbers)."""

    frame: pd.DataFrame  # the Receivable Schedule as delivered
    state: dict  # arrays the monthly simulation starts from
    breaches: list[dict]  # ground truth: planted Section 2.3 breaches


def _amortise(balance, pay, apr_e6, installments):
    """Balance after `installments` level payments with one month's interest each."""
    balance = balance.copy()
    for step in range(int(installments.max(initial=0))):
        active = installments > step
        interest = div_half_up(balance * apr_e6, 12_000_000)
        principal = np.minimum(pay - interest, balance)
        balance = np.where(active, balance - np.maximum(principal, 0), balance)
    return balance


def build_schedule(deal: Deal, receivables: int, rng: np.random.Generator) -> Schedule:
    n = receivables
    cutoff = deal.cutoff_date
    cutoff_day = day_number(cutoff)
    cutoff_month = month_index(cutoff)

    orig_term = rng.choice(TERMS, size=n, p=TERM_WEIGHTS / TERM_WEIGHTS.sum())
    # Installments come due by the cutoff (seasoning): young pool, long tail, at least one.
    seasoning = 1 + np.minimum(rng.geometric(1 / 3.0, size=n) - 1, orig_term - 4)
    old = rng.random(n) < 0.085
    seasoning = np.where(old, 1 + (rng.random(n) * (orig_term - 4)).astype(np.int64), seasoning)
    seasoning = np.clip(seasoning, 1, orig_term - 3)
    first_due_month = cutoff_month - seasoning + 1
    first_due_day = rng.integers(1, 29, size=n)
    first_due = due_dates(first_due_day, first_due_month, np.zeros(n, dtype=np.int64))
    # Installments actually due by the cutoff (a due day after the 30th falls in October).
    due_count = seasoning - (first_due > cutoff_day).astype(np.int64)
    due_count = np.maximum(due_count, 1)
    origination = first_due - rng.integers(30, 46, size=n)

    score = np.clip(rng.normal(712, 58, size=n), 520, 840).astype(np.int64)
    apr_pct = 2.0 + np.maximum(0, 790 - score) * 0.062 + rng.normal(0, 1.1, size=n)
    apr_e6 = np.clip(np.round(apr_pct * 10_000), 9_000, 249_900).astype(np.int64)  # 2.3(w)

    amount = np.clip(rng.lognormal(np.log(17_400), 0.46, size=n), 3_000, 85_000)
    amount_cents = np.round(amount * 100).astype(np.int64)

    # One installment past due (1-30 days) for a few percent of obligors at the cutoff (2.3(z)).
    behind = (rng.random(n) < 0.035) & (due_count >= 2)
    payments_made = due_count - behind.astype(np.int64)

    target = decimal_to_cents(deal.initial_pool_balance)
    for _ in range(4):  # scale the Amount Financed until the cutoff balances hit the target
        pay = level_payment_cents(amount_cents, apr_e6, orig_term)
        balance = _amortise(amount_cents, pay, apr_e6, payments_made)
        # 2.3(q): lift contracts whose balance would fall under $600 at the cutoff.
        lift = np.where(balance < 60_000, 66_000 / np.maximum(balance, 1_000), 1.0)
        amount_cents = np.round(amount_cents * lift).astype(np.int64)
        balance = np.where(lift > 1, (balance * lift).astype(np.int64), balance)
        amount_cents = np.round(amount_cents * (target / balance.sum())).astype(np.int64)
    pay = level_payment_cents(amount_cents, apr_e6, orig_term)
    balance = _amortise(amount_cents, pay, apr_e6, payments_made)

    next_due = due_dates(first_due_day, first_due_month, payments_made)
    days_past_due = np.maximum(0, cutoff_day - next_due)
    last_due_paid = due_dates(first_due_day, first_due_month, np.maximum(payments_made - 1, 0))
    last_payment = np.minimum(last_due_paid + rng.integers(-4, 6, size=n), cutoff_day)
    last_payment = np.maximum(last_payment, origination + 1)
    maturity = due_dates(first_due_day, first_due_month, orig_term - 1)
    remaining_term = orig_term - due_count

    new_vehicle = np.zeros(n, dtype=bool)
    order = rng.permutation(n)
    share = float(deal.new_vehicle_share)
    cumulative = np.cumsum(balance[order]) / target
    new_vehicle[order[cumulative <= share]] = True  # 2.3(s): about 0.75% of the Pool Balance new

    frame_state = {
        "orig_term": orig_term,
        "first_due_day": first_due_day,
        "first_due_month": first_due_month,
        "apr_e6": apr_e6,
        "pay": pay,
        "balance": balance,
        "amount": amount_cents,
        "payments_made": payments_made,
        "last_payment": last_payment,
        "origination": origination,
        "maturity": maturity,
        "remaining_term": remaining_term,
        "days_past_due": days_past_due,
        "score": score,
        "new_vehicle": new_vehicle,
    }
    flags = {
        "is_bankrupt": np.zeros(n, dtype=bool),
        "is_repossessed": np.zeros(n, dtype=bool),
        "is_government_obligor": np.zeros(n, dtype=bool),
    }
    state_codes = rng.choice(len(STATES), size=n, p=STATE_WEIGHTS / STATE_WEIGHTS.sum())
    obligor_state = np.array(STATES, dtype=object)[state_codes]
    interest_method = np.full(n, "simple", dtype=object)
    breaches = _plant_breaches(deal, rng, frame_state, flags, obligor_state, interest_method)

    _hit_pool_balance(frame_state, target, [b["row"] for b in breaches])

    frame = _frame(deal, rng, frame_state, flags, obligor_state, interest_method)
    return Schedule(frame=frame, state=frame_state, breaches=breaches)


def _hit_pool_balance(s: dict, target: int, breached: list[int]) -> None:
    """Spread the cents left to reach the cutoff Pool Balance over the receivables that breach
    nothing: an increase in proportion to each one's room under its Amount Financed (no balance
    passes it, 2.3(b)), a decrease in proportion to its balance."""
    residual = target - int(s["balance"].sum())
    clean = np.setdiff1d(np.arange(len(s["balance"])), breached)
    weights = (s["amount"] - s["balance"])[clean] if residual > 0 else s["balance"][clean]
    # Python integers: a small pool's residual times a weight passes int64 (billions of cents)
    share = (residual * weights.astype(object) // int(weights.sum())).astype(np.int64)
    rest = residual - int(share.sum())  # 0 <= rest < len(clean): one more cent to the first ones
    share[np.argsort(-weights, kind="stable")[:rest]] += 1
    s["balance"][clean] += share
    assert int(s["balance"].sum()) == target


def _plant_breaches(deal, rng, s, flags, obligor_state, interest_method) -> list[dict]:
    """Make a few receivables breach one representation each; return the ground truth."""
    cutoff_day = day_number(deal.cutoff_date)
    # Only receivables that meet every other representation comfortably are used.
    candidates = np.flatnonzero(
        (s["balance"] >= 200_000)
        & (s["remaining_term"] >= 12)
        & (s["payments_made"] >= 2)
        & (s["days_past_due"] == 0)
        & ~s["new_vehicle"]
    )
    # a small pool has fewer candidates: as many of each kind as it allows (none in a tiny one)
    per_kind = min(BREACHES_PER_KIND, len(candidates) // len(BREACH_KINDS))
    chosen = rng.choice(candidates, size=len(BREACH_KINDS) * per_kind, replace=False)
    breaches = []
    for k, (rep, kind, rule) in enumerate(BREACH_KINDS):
        for i in chosen[k * per_kind : (k + 1) * per_kind]:
            if kind == "level_payment":
                s["pay"][i] = s["pay"][i] + 2_500 + int(rng.integers(0, 5_000))
            elif kind == "not_repossessed":
                flags["is_repossessed"][i] = True
            elif kind == "simple_interest":
                interest_method[i] = "precomputed"
            elif kind == "payment_made":
                s["payments_made"][i] = 0
                s["last_payment"][i] = s["origination"][i]
            elif kind == "obligor_state":
                obligor_state[i] = ("PR", "GU", "VI")[len(breaches) % 3]
            elif kind == "government_obligor":
                flags["is_government_obligor"][i] = True
            elif kind == "days_past_due":
                s["days_past_due"][i] = 31 + int(rng.integers(0, 25))
            elif kind == "principal_balance":
                s["balance"][i] = int(rng.integers(15_000, 49_999))
            elif kind == "bankrupt_obligor":
                flags["is_bankrupt"][i] = True
            elif kind == "origination_date":
                bound = dt.date.fromisoformat(str(deal.eligibility["originated_after"]))
                s["origination"][i] = day_number(bound) - int(rng.integers(0, 400))
            elif kind == "original_term":
                s["orig_term"][i] = 78
                s["remaining_term"][i] = min(s["remaining_term"][i], 70)
                # the schedule stays consistent (2.3(b)): the maturity follows the longer term
                s["maturity"][i] = due_dates(
                    s["first_due_day"][i : i + 1], s["first_due_month"][i : i + 1], np.array([77])
                )[0]
            elif kind == "remaining_term":
                s["remaining_term"][i] = int(rng.integers(1, 3))
            elif kind == "apr":
                s["apr_e6"][i] = int(rng.integers(251_000, 279_000))
            if kind in ("original_term", "apr"):
                # the payment still amortises the loan at its (breaching) terms: one breach each
                s["pay"][i] = level_payment_cents(
                    s["amount"][i : i + 1], s["apr_e6"][i : i + 1], s["orig_term"][i : i + 1]
                )[0]
            s["last_payment"][i] = min(s["last_payment"][i], cutoff_day)
            breaches.append({"row": int(i), "representation": rep, "kind": kind, "rule": rule})
    return breaches


def _frame(deal, rng, s, flags, obligor_state, interest_method) -> pd.DataFrame:
    n = len(s["balance"])
    ids = np.char.add("1504", np.char.zfill(np.arange(1, n + 1).astype(str), 7))
    days = lambda a: np.asarray(a, dtype="datetime64[D]")  # noqa: E731
    origination_year = days(s["origination"]).astype("datetime64[Y]").astype(np.int64) + 1970
    model_year = np.where(
        s["new_vehicle"],
        origination_year + rng.integers(0, 2, size=n),
        origination_year - rng.integers(1, 8, size=n),
    )
    first_due = due_dates(s["first_due_day"], s["first_due_month"], np.zeros(n, dtype=np.int64))
    names = (
        np.array(FIRST_NAMES)[rng.integers(0, len(FIRST_NAMES), n)].astype(object)
        + " "
        + np.array(LAST_NAMES)[rng.integers(0, len(LAST_NAMES), n)].astype(object)
    )
    streets = (
        rng.integers(100, 9999, n).astype(str).astype(object)
        + " "
        + np.array(STREETS)[rng.integers(0, len(STREETS), n)].astype(object)
        + " ST"
    )
    return pd.DataFrame(
        {
            "receivable_id": ids,
            "origination_date": days(s["origination"]),
            "first_payment_date": days(first_due),
            "maturity_date": days(s["maturity"]),
            "last_payment_date": days(s["last_payment"]),
            "amount_financed_cents": s["amount"],
            "apr_e6": s["apr_e6"],
            "original_term": s["orig_term"],
            "remaining_term": s["remaining_term"],
            "scheduled_payment_cents": s["pay"],
            "principal_balance_cents": s["balance"],
            "vehicle_new_used": np.where(s["new_vehicle"], "new", "used"),
            "vehicle_model_year": model_year,
            "vehicle_make": np.array(MAKES)[rng.integers(0, len(MAKES), n)],
            "obligor_name": names,
            "obligor_street_address": streets,
            "obligor_state": obligor_state,
            "obligor_credit_score": s["score"],
            "days_past_due": s["days_past_due"],
            "payments_made": s["payments_made"],
            "interest_calculation_method": interest_method,
            "is_bankrupt": flags["is_bankrupt"],
            "is_repossessed": flags["is_repossessed"],
            "is_government_obligor": flags["is_government_obligor"],
        }
    )
