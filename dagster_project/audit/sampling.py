"""A reproducible attribute sample of the cutoff pool, as agreed-upon procedures draw it.

The sample size for a confidence level, a tolerable (maximum) error rate and an expected error
rate is the smallest n for which finding the expected number of errors, ceil(n x expected),
still lets the auditor conclude with that confidence that the pool's error rate is below the
tolerable one: P(X <= ceil(n x expected) | n, tolerable) <= 1 - confidence under the binomial
distribution (95% confidence, 5% tolerable and 2.5% expected give 234; no expected error, 59).
The arithmetic is exact (fractions). The selection is Python's documented Mersenne Twister
(random.Random(seed).sample) over the receivable ids in sorted order: the same pool and seed give
the same sample on any machine.
"""

import random
from fractions import Fraction
from functools import cache
from math import ceil, comb

MAX_SAMPLE = 5_000


def binomial_cdf(k: int, n: int, p: Fraction) -> Fraction:
    """P(X <= k) for X ~ Binomial(n, p), exactly."""
    q = 1 - p
    return sum((comb(n, i) * p**i * q ** (n - i) for i in range(k + 1)), Fraction(0))


@cache
def sample_size(confidence: Fraction, tolerable: Fraction, expected: Fraction) -> int:
    """The smallest n whose upper error limit at `confidence`, with ceil(n x expected) errors
    found, does not exceed the tolerable rate."""
    if not (0 < confidence < 1 and 0 < tolerable < 1 and 0 <= expected < tolerable):
        raise ValueError(
            "need 0 < confidence < 1, 0 < tolerable rate < 1 and 0 <= expected rate < tolerable"
        )
    for n in range(1, MAX_SAMPLE + 1):
        if binomial_cdf(ceil(n * expected), n, tolerable) <= 1 - confidence:
            return n
    raise ValueError(f"no sample of at most {MAX_SAMPLE} receivables reaches that confidence")


def select(ids: list[str], size: int, seed: int) -> list[str]:
    """`size` ids of `ids` drawn without replacement with `seed`, in the order drawn (all of them
    when the pool is smaller)."""
    population = sorted(ids)
    return random.Random(seed).sample(population, min(size, len(population)))


def sample_listing(con, deal, size: int, seed: int) -> list[dict]:
    """The sampled receivables of `deal`'s Receivable Schedule (the cutoff pool), each with every
    attribute its Section 2.3 suite tests: the value in the schedule (or recomputed from it, e.g.
    the level payment's difference), the rule with its tolerance, and the result the suite
    recorded for that receivable (quality.expectation_failures). The rules are the suite's own
    (quality/suites.py): the sample reads their results, it does not test them again."""
    from dagster_project.quality import observations
    from dagster_project.quality.runs import schedule_from_filings
    from dagster_project.quality.suites import schedule_receivable_suite
    from dagster_project.quality.validation import observed_text

    suite = schedule_receivable_suite(deal, public_filings=schedule_from_filings(con, deal))
    population = [
        receivable_id
        for (receivable_id,) in con.execute(
            "select receivable_id from raw.receivable_schedule where deal_id = ?", [deal.deal_id]
        ).fetchall()
    ]
    drawn = select(population, size, seed)
    result = con.execute(
        f"select * from ({observations.SCHEDULE_RECEIVABLES}) where receivable_id in "
        "(select unnest($drawn))",
        {"deal_id": deal.deal_id, "drawn": drawn},
    )
    names = [d[0] for d in result.description]
    frame = {row[0]: dict(zip(names, row, strict=True)) for row in result.fetchall()}
    failing = {
        (expectation, failing_id)
        for expectation, failing_id in con.execute(
            "select expectation_name, failing_id from quality.expectation_failures "
            "where deal_id = ? and suite_name = ?",
            [deal.deal_id, suite.name],
        ).fetchall()
    }
    rows = []
    for order, receivable_id in enumerate(drawn, start=1):
        for rule in suite.rules:
            rows.append(
                {
                    "draw": order,
                    "receivable_id": receivable_id,
                    "representation": rule.representation,
                    "attribute": rule.column,
                    "value": observed_text(frame[receivable_id].get(rule.column), rule.display),
                    "rule": rule.rule,
                    "tolerance": rule.tolerance or "none (exact)",
                    "result": "exception" if (rule.name, receivable_id) in failing else "agrees",
                }
            )
    return rows
