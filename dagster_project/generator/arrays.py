"""Small vectorised helpers shared by the schedule and the monthly simulation."""

import datetime as dt

import numpy as np

EPOCH = dt.date(1970, 1, 1)


def day_number(day: dt.date) -> int:
    return (day - EPOCH).days


def div_half_up(numerator: np.ndarray, denominator: int) -> np.ndarray:
    """Elementwise integer division rounded half up, for non-negative numerators (exact)."""
    return (2 * numerator + denominator) // (2 * denominator)


def month_index(day: dt.date) -> int:
    return day.year * 12 + day.month - 1


def due_dates(first_due_day: np.ndarray, first_due_month: np.ndarray, installment: np.ndarray):
    """Day numbers of installment `installment` (0-based) for each loan.

    The due day of month is that of the first payment, clipped to the month's length.
    """
    offsets = first_due_month + installment - 1970 * 12  # months since 1970-01
    first_of_month = offsets.astype("datetime64[M]").astype("datetime64[D]")
    next_month = (offsets + 1).astype("datetime64[M]").astype("datetime64[D]")
    length = (next_month - first_of_month).astype(np.int64)
    day = np.minimum(first_due_day, length)
    return first_of_month.astype(np.int64) + day - 1


def level_payment_cents(amount_cents: np.ndarray, apr_e6: np.ndarray, term: np.ndarray):
    """Level monthly payment that amortises the Amount Financed at the APR (2.3(a)(iii)).

    A contract term computed once at origination and rounded to the cent; the annuity factor is
    evaluated in binary floating point (the contract's own pricing), the result is integer cents.
    """
    rate = apr_e6.astype(np.float64) / 12e6
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(rate > 0, rate / (1.0 - (1.0 + rate) ** (-term)), 1.0 / term)
    return np.rint(amount_cents * factor).astype(np.int64)
