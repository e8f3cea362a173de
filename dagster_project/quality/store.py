"""The quality schema of the warehouse: every expectation's result, every failing row, the breach
register the dbt models read (quality.eligibility_exceptions), the certificate gate, and what each
validated subject's inputs were (quality.validated_inputs: a validation whose inputs are unchanged
need not run again).

Each suite's rows are replaced whole in one transaction, so a rerun is idempotent.
"""

import datetime as dt
from dataclasses import dataclass

from dagster_project.quality.validation import Outcome
from dagster_project.warehouse import table_exists, transaction

DDL = """
create schema if not exists quality;
create table if not exists quality.expectation_results (
    suite_name varchar, subject varchar, expectation_name varchar, representation varchar,
    also_tests varchar, rule_text varchar, tolerance_text varchar, is_blocking boolean,
    element_count bigint, unexpected_count bigint, is_success boolean, validated_at timestamptz
);
create table if not exists quality.expectation_failures (
    suite_name varchar, expectation_name varchar, representation varchar, is_blocking boolean,
    failing_id varchar, observed_value varchar, validated_at timestamptz
);
create table if not exists quality.eligibility_exceptions (
    receivable_id varchar, representation varchar, suite_name varchar, expectation_name varchar,
    rule_text varchar, observed_value varchar, schedule_delivery_id varchar, discovered_date date,
    validated_at timestamptz
);
create table if not exists quality.certificate_gate (
    collection_period varchar, distribution_date date, is_publishable boolean,
    withheld_reason varchar, evaluated_at timestamptz
);
create table if not exists quality.validated_inputs (
    subject varchar, inputs_sha256 varchar, validated_at timestamptz
);
"""


def ensure_schema(con) -> None:
    con.execute(DDL)


def save_outcomes(con, outcomes: list[Outcome], validated_at: dt.datetime) -> None:
    """Replace the results and failing rows of the suites in `outcomes`."""
    suites = sorted({o.suite.name for o in outcomes})
    results = [
        (
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
            validated_at,
        )
        for o in outcomes
    ]
    failures = [
        (
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
        for table in ("expectation_results", "expectation_failures"):
            con.execute(f"delete from quality.{table} where list_contains(?, suite_name)", [suites])
        if results:
            con.executemany(
                "insert into quality.expectation_results values "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                results,
            )
        if failures:
            con.executemany(
                "insert into quality.expectation_failures values (?, ?, ?, ?, ?, ?, ?)", failures
            )


def save_register(
    con,
    outcomes: list[Outcome],
    delivery_id: str | None,
    discovered: dt.date,
    validated_at: dt.datetime,
) -> int:
    """The breach register: one row per receivable and failed receivable-level expectation."""
    rows = [
        (
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
        con.execute("delete from quality.eligibility_exceptions")
        if rows:
            con.executemany(
                "insert into quality.eligibility_exceptions values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
    return len(rows)


def save_validated_inputs(con, subject: str, inputs_sha256: str, validated_at: dt.datetime) -> None:
    """Record the fingerprint of what `subject` was validated on (written after its results)."""
    with transaction(con):
        con.execute("delete from quality.validated_inputs where subject = ?", [subject])
        con.execute(
            "insert into quality.validated_inputs values (?, ?, ?)",
            [subject, inputs_sha256, validated_at],
        )


def validated_inputs(con, subject: str) -> str | None:
    """The fingerprint recorded by the last complete validation of `subject`, if any."""
    if not table_exists(con, "quality", "validated_inputs"):  # never validated, or from before
        return None
    row = con.execute(
        "select inputs_sha256 from quality.validated_inputs where subject = ?", [subject]
    ).fetchone()
    return row[0] if row else None


@dataclass(frozen=True)
class GateRow:
    collection_period: str
    distribution_date: dt.date
    is_publishable: bool
    withheld_reason: str | None


def certificate_gate(periods: list[tuple[str, dt.date]], outcomes: list[Outcome]) -> list[GateRow]:
    """A period's certificate is withheld when a blocking expectation fails for it, and so is every
    later one: the waterfall carries balances and accounts from one Distribution Date to the next.
    """
    failed: dict[str, list[str]] = {}
    for outcome in outcomes:
        if not outcome.rule.blocking:
            continue
        for period, observed in outcome.offenders:
            failed.setdefault(period, []).append(
                f"{outcome.rule.representation} {outcome.rule.rule} ({outcome.rule.column} = "
                f"{observed})"
            )
    rows, first_failure = [], None
    for period, date in periods:
        if period in failed:
            reason = f"{period} failed: " + "; ".join(failed[period])
            first_failure = first_failure or period
        elif first_failure:
            reason = f"withheld because {first_failure}, whose state it carries, failed"
        else:
            reason = None
        rows.append(GateRow(period, date, reason is None, reason))
    return rows


def save_gate(con, rows: list[GateRow], evaluated_at: dt.datetime) -> None:
    with transaction(con):
        con.execute("delete from quality.certificate_gate")
        if rows:
            con.executemany(
                "insert into quality.certificate_gate values (?, ?, ?, ?, ?)",
                [
                    (r.collection_period, r.distribution_date, r.is_publishable,
                     r.withheld_reason, evaluated_at)
                    for r in rows
                ],
            )  # fmt: skip
