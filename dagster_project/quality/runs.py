"""The two validation runs: the Receivable Schedule when it is loaded, the servicing criteria after
the dbt models are built. Both write their results to the quality schema of the warehouse."""

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

from dagster_project.deal import Deal
from dagster_project.quality import observations, store
from dagster_project.quality.suites import (
    schedule_pool_suite,
    schedule_receivable_suite,
    servicing_criteria_suite,
)
from dagster_project.quality.validation import Outcome, validate

SCHEDULE_SUITES = ("receivable_schedule_receivables", "receivable_schedule_pool")
SERVICING_SUITES = ("servicing_criteria",)


@dataclass(frozen=True)
class Summary:
    """One expectation's stored result (what checks and reports show)."""

    suite_name: str
    expectation_name: str
    representation: str
    rule_text: str
    is_blocking: bool
    element_count: int
    unexpected_count: int
    is_success: bool


def schedule_inputs(con, deal: Deal) -> str:
    """A fingerprint of everything the Section 2.3 results depend on: the loaded schedule (its
    delivery), the two suites as the deal file and the code build them (every rule and bound),
    the queries that feed them, and the Closing Date (the register's discovery date)."""
    delivery = con.execute(observations.SCHEDULE_DELIVERY).fetchone()
    parts = (
        delivery[0] if delivery else None,
        schedule_receivable_suite(deal),
        schedule_pool_suite(deal),
        observations.SCHEDULE_RECEIVABLES,
        observations.SCHEDULE_POOL,
        deal.closing_date,
    )
    return hashlib.sha256("\x1f".join(map(repr, parts)).encode()).hexdigest()


def schedule_validated(con, deal: Deal) -> bool:
    """Whether the stored Section 2.3 results are those of the schedule and suites as they are."""
    return store.validated_inputs(con, "schedule") == schedule_inputs(con, deal)


def validate_schedule(con, deal: Deal, gx_root: Path | None = None) -> list[Outcome]:
    """Run the Section 2.3 suites on raw.receivable_schedule; write results and the register,
    then the fingerprint of their inputs (a run stopped before it validates again)."""
    inputs = schedule_inputs(con, deal)
    frame = con.execute(observations.SCHEDULE_RECEIVABLES).df()
    receivables = validate(frame, schedule_receivable_suite(deal), gx_root)
    pool_frame = con.execute(observations.SCHEDULE_POOL).df()
    pool = validate(pool_frame, schedule_pool_suite(deal), gx_root)
    now = dt.datetime.now(dt.UTC)
    delivery = con.execute(observations.SCHEDULE_DELIVERY).fetchone()
    store.ensure_schema(con)
    store.save_outcomes(con, receivables + pool, now)
    # 2.3 speaks as of the Closing Date and the schedule is delivered at closing: a breach in it
    # is discovered on the Closing Date, and 2.4's cure period runs from there.
    store.save_register(con, receivables, delivery[0] if delivery else None, deal.closing_date, now)
    store.save_validated_inputs(con, "schedule", inputs, now)
    return receivables + pool


def validate_servicing(
    con, deal: Deal, gx_root: Path | None = None
) -> tuple[list[Outcome], list[store.GateRow]]:
    """Run the servicing-criteria suite on marts.rpt_servicing_criteria; write the gate."""
    frame = con.execute(observations.SERVICING_CRITERIA).df()
    outcomes = validate(frame, servicing_criteria_suite(deal), gx_root)
    now = dt.datetime.now(dt.UTC)
    periods = list(zip(frame["collection_period"], frame["distribution_date"].dt.date, strict=True))
    gate = store.certificate_gate(periods, outcomes)
    store.ensure_schema(con)
    store.save_outcomes(con, outcomes, now)
    store.save_gate(con, gate, now)
    return outcomes, gate


@dataclass(frozen=True)
class PeriodResult:
    """The servicing criteria of one Collection Period and whether its certificate publishes."""

    collection_period: str
    distribution_date: dt.date
    is_publishable: bool
    withheld_reason: str | None
    failing: list[str]  # "criterion expectation" the period fails


def period_results(con, since: str = "") -> list[PeriodResult]:
    """Each Collection Period from `since` on (all by default) as the last validation left it."""
    rows = con.execute(
        "select gate.collection_period, gate.distribution_date, gate.is_publishable, "
        "gate.withheld_reason, list(distinct failure.representation || ' ' || "
        "failure.expectation_name order by failure.representation || ' ' || "
        "failure.expectation_name) filter (where failure.failing_id is not null) "
        "from quality.certificate_gate as gate left join quality.expectation_failures as failure "
        "on failure.suite_name = ? and failure.failing_id = gate.collection_period "
        "where gate.collection_period >= ? group by all order by 1",
        [SERVICING_SUITES[0], since],
    ).fetchall()
    return [PeriodResult(*row[:4], failing=row[4] or []) for row in rows]


def summaries(con, suites: tuple[str, ...]) -> list[Summary]:
    store.ensure_schema(con)
    rows = con.execute(
        "select suite_name, expectation_name, representation, rule_text, is_blocking, "
        "element_count, unexpected_count, is_success from quality.expectation_results "
        "where list_contains(?, suite_name) order by suite_name, expectation_name",
        [list(suites)],
    ).fetchall()
    return [Summary(*row) for row in rows]


def failing_ids(con, suite: str, representation: str, limit: int = 20) -> list[str]:
    rows = con.execute(
        "select distinct failing_id from quality.expectation_failures "
        "where suite_name = ? and representation = ? order by failing_id limit ?",
        [suite, representation, limit],
    ).fetchall()
    return [row[0] for row in rows]
