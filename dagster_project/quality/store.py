"""The quality schema of the warehouse: every expectation's result, every failing row, the breach
register the dbt models read (quality.eligibility_exceptions), and the certificate gate.

Rows are keyed by trust (deal_id; "shelf" for a suite run over every trust at once) and replaced
whole per trust and suite in one transaction, so a rerun is idempotent.
"""

import datetime as dt
from dataclasses import dataclass

from dagster_project.quality.validation import Outcome
from dagster_project.warehouse import insert_rows, transaction

SHELF = "shelf"  # the deal_id of results of a suite run over every trust at once

DDL = """
create schema if not exists quality;
create table if not exists quality.expectation_results (
    deal_id varchar, suite_name varchar, subject varchar, expectation_name varchar,
    representation varchar, also_tests varchar, rule_text varchar, tolerance_text varchar,
    is_blocking boolean, element_count bigint, unexpected_count bigint, is_success boolean,
    validated_delivery_id varchar, validated_at timestamptz
);
create table if not exists quality.expectation_failures (
    deal_id varchar, suite_name varchar, expectation_name varchar, representation varchar,
    is_blocking boolean, failing_id varchar, observed_value varchar, validated_at timestamptz
);
create table if not exists quality.eligibility_exceptions (
    deal_id varchar, receivable_id varchar, representation varchar, suite_name varchar,
    expectation_name varchar, rule_text varchar, observed_value varchar,
    schedule_delivery_id varchar, discovered_date date, validated_at timestamptz
);
create table if not exists quality.certificate_gate (
    deal_id varchar, collection_period varchar, distribution_date date, is_publishable boolean,
    withheld_reason varchar, evaluated_at timestamptz
);
"""


def ensure_schema(con) -> None:
    con.execute(DDL)


def save_outcomes(
    con,
    deal_id: str,
    outcomes: list[Outcome],
    validated_at: dt.datetime,
    delivery_id: str | None = None,
) -> None:
    """Replace the trust's results and failing rows of the suites in `outcomes` (run on the
    delivery `delivery_id`, when the subject is one)."""
    suites = sorted({o.suite.name for o in outcomes})
    results = [
        (
            deal_id,
            o.suite.name,
            o.suite.subject,
            o.rule.name,
            o.rule.representation,
            ", ".join(o.rule.also),
            o.rule.rule,
            o.rule.tolerance or None,
            o.rule.blocking,
            o.element_count,
            o.unexpected_count,
            o.success,
            delivery_id,
            validated_at,
        )
        for o in outcomes
    ]
    failures = [
        (
            deal_id,
            o.suite.name,
            o.rule.name,
            o.rule.representation,
            o.rule.blocking,
            failing_id,
            observed,
            validated_at,
        )
        for o in outcomes
        for failing_id, observed in o.offenders
    ]
    with transaction(con):
        ensure_schema(con)
        for table in ("expectation_results", "expectation_failures"):
            con.execute(
                f"delete from quality.{table} where deal_id = ? and list_contains(?, suite_name)",
                [deal_id, suites],
            )
        if results:
            insert_rows(con, "quality.expectation_results", results)
        if failures:
            insert_rows(con, "quality.expectation_failures", failures)


def save_register(
    con,
    deal_id: str,
    outcomes: list[Outcome],
    delivery_id: str | None,
    discovered: dt.date,
    validated_at: dt.datetime,
) -> int:
    """The trust's breach register: one row per receivable and failed receivable-level
    expectation."""
    rows = [
        (
            deal_id,
            receivable_id,
            o.rule.representation,
            o.suite.name,
            o.rule.name,
            o.rule.rule,
            observed,
            delivery_id,
            discovered,
            validated_at,
        )
        for o in outcomes
        for receivable_id, observed in o.offenders
        if receivable_id not in ("None", "")  # a missing contract number cannot be repurchased
    ]
    with transaction(con):
        ensure_schema(con)
        con.execute("delete from quality.eligibility_exceptions where deal_id = ?", [deal_id])
        if rows:
            insert_rows(con, "quality.eligibility_exceptions", rows)
    return len(rows)


@dataclass(frozen=True)
class PeriodStatus:
    """A Collection Period's tape as the warehouse holds it (int_collection_period__tape_status)."""

    deal_id: str
    collection_period: str
    distribution_date: dt.date
    is_tape_loaded: bool
    is_latest_delivery_rejected: bool
    rejected_finding: str | None


@dataclass(frozen=True)
class GateRow:
    deal_id: str
    collection_period: str
    distribution_date: dt.date
    is_publishable: bool
    withheld_reason: str | None


def validated_delivery(con, deal_id: str, suite_name: str) -> str | None:
    """The delivery a trust's suite last ran on."""
    ensure_schema(con)
    row = con.execute(
        "select any_value(validated_delivery_id) from quality.expectation_results "
        "where deal_id = ? and suite_name = ?",
        [deal_id, suite_name],
    ).fetchone()
    return row[0] if row else None


def certificate_gate(
    periods: list[PeriodStatus],
    failures: dict[tuple[str, str], list[str]],
    trust_failures: dict[str, list[str]] | None = None,
) -> list[GateRow]:
    """Whether each trust's certificate of each Distribution Date is published, and why not.

    A period's certificate is withheld when its tape is not loaded (not delivered, or its
    delivery rejected) or a blocking expectation fails for it (`failures`, keyed by trust and
    Collection Period); every later certificate of the trust is withheld too, since the waterfall
    carries balances and accounts from one Distribution Date to the next. A trust held
    whatever its periods (`trust_failures`, each text a whole reason: its Receivable Schedule
    failed a blocking expectation or is held, its deal file is held: quality/runs.py
    trust_holds) has every certificate withheld. Other trusts are not affected."""
    rows: list[GateRow] = []
    first_problem: dict[str, str] = {}
    trust_failures = trust_failures or {}
    for period in sorted(periods, key=lambda p: (p.deal_id, p.distribution_date)):
        key = (period.deal_id, period.collection_period)
        name = period.collection_period
        if not period.is_tape_loaded and period.is_latest_delivery_rejected:
            reason = f"the delivery for {name} was rejected: {period.rejected_finding}"
        elif not period.is_tape_loaded:
            reason = f"no tape delivered for {name}"
        elif key in failures:
            reason = f"{name} failed: {'; '.join(failures[key])}"
        else:
            reason = None
        earlier = first_problem.get(period.deal_id)
        if period.deal_id in trust_failures:
            reason = "; ".join(trust_failures[period.deal_id])
        elif earlier:
            reason = f"withheld because {earlier}, whose state it carries, is withheld"
        elif reason:
            first_problem[period.deal_id] = name
        rows.append(GateRow(period.deal_id, name, period.distribution_date, reason is None, reason))
    return rows


def save_gate(con, rows: list[GateRow], evaluated_at: dt.datetime) -> None:
    with transaction(con):
        ensure_schema(con)
        con.execute("delete from quality.certificate_gate")
        if rows:
            insert_rows(
                con,
                "quality.certificate_gate",
                [
                    (r.deal_id, r.collection_period, r.distribution_date, r.is_publishable,
                     r.withheld_reason, evaluated_at)
                    for r in rows
                ],
            )  # fmt: skip
