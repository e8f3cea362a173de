"""Data quality: the Great Expectations suites as Dagster assets with asset checks.

- quality/eligibility_exceptions: each trust's Receivable Schedule against Section 2.3 (the breach
  register the dbt models read for the 2.4 repurchases). A trust's suites run when its loaded
  schedule is not the one they last ran on (or always, in a run without partitions). Its checks:
  the receivable-level suite (breaches are repurchased, so it warns) and the pool suite (the
  cutoff Pool Balance must be the deal file's: a failure withholds every certificate of that
  trust, through the gate).
- quality/certificate_gate: the servicing criteria of Regulation AB Item 1122(d) (Exhibit D) on
  every computed Collection Period, which decide with the tape statuses which certificates are
  published and which withheld (and why); one check per criterion. It then brings the auditor's
  exceptions and their history up to date (audit/exceptions.py). Great Expectations' Data Docs
  are built once, after the run's suites.
"""

import datetime as dt

import dagster as dg

from dagster_project.audit import exceptions
from dagster_project.defs.ingestion import run_trusts
from dagster_project.quality.runs import (
    SERVICING_SUITE,
    schedule_loaded,
    schedule_validated,
    summaries,
    validate_schedule,
    validate_servicing,
)
from dagster_project.quality.suites import SERVICING_MEASURES
from dagster_project.quality.validation import build_data_docs, data_docs_index
from dagster_project.resources import WarehouseResource

REGISTER = dg.AssetKey(["quality", "eligibility_exceptions"])


def build_name(context: dg.AssetExecutionContext) -> str:
    """The name the Data Docs give a validation: the Dagster run (the build) that ran it."""
    return f"run-{context.run_id}"


GATE = dg.AssetKey(["quality", "certificate_gate"])
SCHEDULE_CHECKS = {
    "receivable_schedule_receivables": (
        "section_2_3_receivables",
        "Section 2.3 representations tested on every receivable of each trust's schedule; "
        "breaches go to the register (marts.fct_eligibility_exception) and are repurchased "
        "under 2.4.",
    ),
    "receivable_schedule_pool": (
        "section_2_3_pool",
        "Section 2.3(s) and (v) on each trust's pool, and its cutoff Pool Balance against the "
        "deal file (a failure withholds every certificate of the trust).",
    ),
}


def _table(rows) -> str:
    lines = ["| trust | representation | expectation | tested | failed |", "|---|---|---|---|---|"]
    lines += [
        f"| {r.deal_id} | {r.representation} | {r.expectation_name} | {r.element_count} "
        f"| {r.unexpected_count} |"
        for r in rows
    ]
    return "\n".join(lines)


@dg.multi_asset(
    name="eligibility_register",
    specs=[
        dg.AssetSpec(
            REGISTER,
            description="The Section 2.3 breaches the Great Expectations suites found in each "
            "trust's schedule, one row per receivable and failed expectation.",
            group_name="quality",
            kinds={"duckdb"},
            deps=[dg.AssetKey(["raw", "receivable_schedule"])],
        )
    ],
    check_specs=[
        dg.AssetCheckSpec(name, asset=REGISTER, description=description)
        for name, description in SCHEDULE_CHECKS.values()
    ],
)
def eligibility_register(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    deals = run_trusts(context, warehouse)
    full = not (context.has_partition_key or context.has_partition_key_range)
    validated, without_schedule = [], []
    with warehouse.connect() as con:
        for deal in deals:
            if not schedule_loaded(con, deal):  # e.g. a trust reconciled from its certificates
                without_schedule.append(deal.deal_id)
            elif full or not schedule_validated(con, deal):
                validate_schedule(con, deal, run_name=build_name(context))
                validated.append(deal.deal_id)
        results = summaries(con)
        breaches = con.execute("select count(*) from quality.eligibility_exceptions").fetchone()[0]
    if validated:
        build_data_docs()
    yield dg.MaterializeResult(
        asset_key=REGISTER,
        metadata={
            "breaches": breaches,
            "validated_this_run": ", ".join(validated) or "none",
            "trusts_without_a_schedule": ", ".join(without_schedule) or "none",
        },
    )
    for suffix, (name, _description) in SCHEDULE_CHECKS.items():
        rows = [r for r in results if r.suite_name.endswith(suffix)]
        yield dg.AssetCheckResult(
            asset_key=REGISTER,
            check_name=name,
            passed=all(r.is_success for r in rows),
            severity=dg.AssetCheckSeverity.WARN,
            metadata={
                "expectations": len(rows),
                "failed_expectations": sum(not r.is_success for r in rows),
                "failing_rows": sum(r.unexpected_count for r in rows),
                "results": dg.MetadataValue.md(_table(rows)),
                "data_docs": str(data_docs_index()),
            },
        )


CRITERIA = sorted(
    {(representation, column) for column, representation, _rule, _also in SERVICING_MEASURES}
)


def _check_name(column: str) -> str:
    return column.removesuffix("_count").removesuffix("_cents").removesuffix("_amount")


@dg.multi_asset(
    name="certificate_gate",
    specs=[
        dg.AssetSpec(
            GATE,
            description="Which certificate of each trust is published and which withheld (and "
            "why): the servicing criteria (Exhibit D) of every computed Collection Period, the "
            "tape statuses, the schedule suites and the trusts held (a Receivable Schedule or deal "
            "file changed and not applied).",
            group_name="quality",
            kinds={"duckdb"},
            deps=[
                dg.AssetKey(["marts", "rpt_servicing_criteria"]),
                dg.AssetKey(["intermediate", "int_collection_period__tape_status"]),
                REGISTER,
            ],
        )
    ],
    check_specs=[
        dg.AssetCheckSpec(
            _check_name(column),
            asset=GATE,
            description=f"Regulation AB {representation} (Exhibit D): {column} is zero for every "
            "Collection Period; a failing period's certificate is withheld.",
        )
        for representation, column in CRITERIA
    ],
)
def certificate_gate(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    with warehouse.connect() as con:
        outcomes, gate = validate_servicing(con, run_name=build_name(context))
        now = dt.datetime.now(dt.UTC)
        events = exceptions.record(con, SERVICING_SUITE, now.date(), now)
    context.log.info(f"auditor's exceptions: {events} status changes recorded")
    build_data_docs()
    withheld = [g for g in gate if not g.is_publishable]
    yield dg.MaterializeResult(
        asset_key=GATE,
        metadata={
            "certificates_publishable": len(gate) - len(withheld),
            "certificates_withheld": len(withheld),
            "withheld": dg.MetadataValue.md(
                "\n".join(
                    f"- {g.deal_id} {g.distribution_date}: {g.withheld_reason}"
                    for g in withheld[:30]
                )
                or "none"
            ),
        },
    )
    for representation, column in CRITERIA:
        mine = [o for o in outcomes if o.rule.column == column]
        failing = sorted({key for o in mine for key, _ in o.offenders})
        yield dg.AssetCheckResult(
            asset_key=GATE,
            check_name=_check_name(column),
            passed=all(o.success for o in mine),
            severity=dg.AssetCheckSeverity.WARN,
            metadata={
                "criterion": representation,
                "suite": SERVICING_SUITE,
                "periods_tested": mine[0].element_count if mine else 0,
                "failing_periods": ", ".join(failing[:30]) or "none",
            },
        )
