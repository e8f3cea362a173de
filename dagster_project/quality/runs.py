"""The validation runs: each trust's Receivable Schedule against Section 2.3 (when it is loaded),
and the servicing criteria of every trust's computed Collection Periods after the dbt models are
built, which decide the certificate gate. Both write their results to the quality schema."""

import datetime as dt
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
from dagster_project.warehouse import table_exists

SERVICING_SUITE = "servicing_criteria"


def schedule_loaded(con, deal: Deal) -> bool:
    """Whether a Receivable Schedule of the trust is loaded (a trust reconciled from its published
    certificates has none)."""
    return (
        con.execute(observations.SCHEDULE_DELIVERY, {"deal_id": deal.deal_id}).fetchone()
        is not None
    )


def schedule_from_filings(con, deal: Deal) -> bool:
    """Whether the trust's Receivable Schedule was built from an SEC EX-102 filing."""
    return con.execute(observations.SCHEDULE_FROM_FILINGS, {"deal_id": deal.deal_id}).fetchone()[0]


def schedule_validated(con, deal: Deal) -> bool:
    """Whether the trust's loaded Receivable Schedule is the one its suites last ran on."""
    delivery = con.execute(observations.SCHEDULE_DELIVERY, {"deal_id": deal.deal_id}).fetchone()
    validated = store.validated_delivery(con, deal.deal_id, schedule_pool_suite(deal).name)
    return delivery is not None and validated == delivery[0]


def validate_schedule(
    con, deal: Deal, gx_root: Path | None = None, run_name: str = "unnamed-build"
) -> list[Outcome]:
    """Run the Section 2.3 suites on the trust's raw.receivable_schedule; write its results and
    its breach register. `run_name` names the build in the Data Docs."""
    params = {"deal_id": deal.deal_id}
    frame = con.execute(observations.SCHEDULE_RECEIVABLES, params).df()
    public = schedule_from_filings(con, deal)
    suite = schedule_receivable_suite(deal, public_filings=public)
    receivables = validate(frame, suite, gx_root, run_name)
    pool_frame = con.execute(observations.SCHEDULE_POOL, params).df()
    pool = validate(pool_frame, schedule_pool_suite(deal, public), gx_root, run_name)
    now = dt.datetime.now(dt.UTC)
    delivery = con.execute(observations.SCHEDULE_DELIVERY, params).fetchone()
    store.save_outcomes(
        con, deal.deal_id, receivables + pool, now, delivery[0] if delivery else None
    )
    # 2.3 speaks as of the Closing Date and the schedule is delivered at closing: a breach in it
    # is discovered on the Closing Date, and 2.4's cure period runs from there.
    store.save_register(
        con, deal.deal_id, receivables, delivery[0] if delivery else None, deal.closing_date, now
    )
    return receivables + pool


TAPE_STATUS = """
select deal_id, collection_period, distribution_date, is_tape_loaded, is_latest_delivery_rejected,
    rejected_finding
from intermediate.int_collection_period__tape_status
order by deal_id, period_number
"""


def validate_servicing(
    con, gx_root: Path | None = None, run_name: str = "unnamed-build"
) -> tuple[list[Outcome], list[store.GateRow]]:
    """Run the servicing-criteria suite on marts.rpt_servicing_criteria (every trust at once);
    write its results and the certificate gate. `run_name` names the build in the Data Docs."""
    frame = con.execute(observations.SERVICING_CRITERIA).df()
    outcomes = validate(frame, servicing_criteria_suite(), gx_root, run_name)
    failures: dict[tuple[str, str], list[str]] = {}
    for outcome in outcomes:
        if not outcome.rule.blocking:
            continue
        for period_key, observed in outcome.offenders:
            deal_id, _, period = period_key.partition("/")
            failures.setdefault((deal_id, period), []).append(
                f"{outcome.rule.representation} {outcome.rule.rule} "
                f"({outcome.rule.column} = {observed})"
            )
    periods = [store.PeriodStatus(*row) for row in con.execute(TAPE_STATUS).fetchall()]
    gate = store.certificate_gate(periods, failures, trust_holds(con))
    now = dt.datetime.now(dt.UTC)
    store.save_outcomes(con, store.SHELF, outcomes, now)
    store.save_gate(con, gate, now)
    return outcomes, gate


def trust_holds(con) -> dict[str, list[str]]:
    """Why each trust's certificates are withheld whatever its periods, each text a whole reason:
    its Receivable Schedule suites' failed blocking expectations (one text), its delivered
    schedule held (not the one loaded: ingestion/loads.py hold_schedules), its deal file held
    (changed and not applied: ingestion/deal_tables.py hold_deal_files)."""
    store.ensure_schema(con)
    failed = con.execute(
        "select deal_id, string_agg(representation || ' ' || rule_text, '; ' "
        "order by representation, rule_text) from quality.expectation_results "
        "where is_blocking and not is_success and deal_id <> ? group by deal_id order by deal_id",
        [store.SHELF],
    ).fetchall()
    out: dict[str, list[str]] = {}
    for deal_id, rules in failed:
        out.setdefault(deal_id, []).append(f"the Receivable Schedule failed: {rules}")
    for table, label in (
        ("schedule_holds", "the Receivable Schedule delivered is held: "),
        ("deal_file_holds", ""),
    ):
        if table_exists(con, "raw", table):
            held = con.execute(f"select deal_id, reason from raw.{table} order by all").fetchall()
            for deal_id, reason in held:
                out.setdefault(deal_id, []).append(label + reason)
    return out


@dataclass(frozen=True)
class Summary:
    """One expectation's stored result (what checks and reports show)."""

    deal_id: str
    suite_name: str
    expectation_name: str
    representation: str
    rule_text: str
    is_blocking: bool
    element_count: int
    unexpected_count: int
    is_success: bool


def summaries(con, suites: list[str] | None = None) -> list[Summary]:
    """The stored results of the named suites (all when None)."""
    store.ensure_schema(con)
    rows = con.execute(
        "select deal_id, suite_name, expectation_name, representation, rule_text, is_blocking, "
        "element_count, unexpected_count, is_success from quality.expectation_results "
        "where ?::varchar[] is null or list_contains(?::varchar[], suite_name) "
        "order by deal_id, suite_name, expectation_name",
        [suites, suites],
    ).fetchall()
    return [Summary(*row) for row in rows]
