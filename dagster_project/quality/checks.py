"""Dagster asset checks that show the suites' results on the assets they validate.

- quality/eligibility_exceptions (the asset that runs the Section 2.3 suites on the schedule and
  keeps the breach register): Section 2.3, receivable by receivable (breaches feed the register
  and the 2.4 repurchase, so they warn and do not stop the run) and for the pool (the cutoff Pool
  Balance must equal the deal file's: blocking, an ERROR stops everything downstream).
- the marts: one check per servicing criterion of Exhibit D, all from one run of the
  servicing_criteria suite. They are blocking so that publication waits for them; a failure is
  reported with WARN severity because the certificate gate (quality.certificate_gate) withholds
  exactly the failing periods' certificates (and the later ones) rather than the whole run.
- each monthly partition of raw/loan_status: the servicing criteria of that Collection Period
  and whether its certificate is published (a partitioned check, a Dagster preview feature).
  The servicing run reports it for every period the build recomputed and every period whose
  shown result is no longer current; the check itself evaluates one period when run for a
  partition (the monthly job, or the UI).
"""

import warnings

import dagster as dg
import duckdb

from dagster_project import warehouse as warehouse_files
from dagster_project.ingestion.partitions import COLLECTION_PERIODS
from dagster_project.quality.runs import PeriodResult, Summary, period_results, validate_servicing
from dagster_project.quality.validation import data_docs_index
from dagster_project.resources import WarehouseResource
from dagster_project.transformation.build_plan import last_rebuilt_from

REGISTER = dg.AssetKey(["quality", "eligibility_exceptions"])
SCHEDULE_CHECKS = {
    "receivable_schedule_receivables": (
        "section_2_3_receivables",
        "Section 2.3 representations tested on every receivable of the schedule; breaches go to "
        "the register (marts.fct_eligibility_exception) and are repurchased under 2.4.",
        False,
    ),
    "receivable_schedule_pool": (
        "section_2_3_pool",
        "Section 2.3(s) and (v) on the pool, and the cutoff Pool Balance against the deal file "
        "(blocking: a schedule that is not the deal's stops the run).",
        True,
    ),
}
SCHEDULE_CHECK_SPECS = [
    dg.AssetCheckSpec(name, asset=REGISTER, description=description, blocking=blocking)
    for name, description, blocking in SCHEDULE_CHECKS.values()
]

RECEIVABLE_PERIODS = dg.AssetKey(["marts", "fct_receivable_period"])
SERVICING_CHECKS = {
    "1122(d)(4)(v)": (RECEIVABLE_PERIODS, "balances_follow_the_simple_interest_method"),
    "1122(d)(1)(v)": (RECEIVABLE_PERIODS, "servicer_figures_aggregate_accurately"),
    "1122(d)(4)(xiv)": (RECEIVABLE_PERIODS, "charge_offs_follow_the_agreement"),
    "1122(d)(4)(vi)": (RECEIVABLE_PERIODS, "extensions_within_section_3_2"),
    "1122(d)(4)(iii)": (dg.AssetKey(["marts", "fct_repurchase"]), "repurchases_follow_section_2_4"),
    "1122(d)(3)(ii)": (
        dg.AssetKey(["marts", "fct_waterfall"]),
        "distributions_follow_the_priority_of_payments",
    ),
    "1122(d)(4)(xv)": (dg.AssetKey(["marts", "fct_waterfall"]), "reserve_account_rolls_forward"),
}
SERVICING_CHECK_SPECS = [
    dg.AssetCheckSpec(
        name,
        asset=key,
        blocking=True,
        additional_deps=[dg.AssetKey(["marts", "rpt_servicing_criteria"])],
        description=f"Regulation AB {criterion} (Exhibit D), every Collection Period; a failing "
        "period's certificate is withheld.",
    )
    for criterion, (key, name) in SERVICING_CHECKS.items()
]


TAPE = dg.AssetKey(["raw", "loan_status"])
PERIOD_CHECK = "servicing_criteria_of_the_period"


def period_evaluation(period: PeriodResult) -> dict:
    """Pass/fail of one Collection Period: its own criteria (Exhibit D); the certificate's fate
    (which also depends on the periods before it) is in the metadata."""
    certificate = "published" if period.is_publishable else f"withheld: {period.withheld_reason}"
    return {
        "passed": not period.failing,
        "severity": dg.AssetCheckSeverity.WARN,
        "metadata": {
            "distribution_date": period.distribution_date.isoformat(),
            "certificate": certificate,
            "failing_expectations": ", ".join(period.failing) or "none",
        },
    }


with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)  # partitioned checks: said above

    @dg.asset_check(
        asset=TAPE,
        name=PERIOD_CHECK,
        partitions_def=COLLECTION_PERIODS,
        additional_deps=[dg.AssetKey(["published_warehouse"])],
        description="Regulation AB servicing criteria (Exhibit D) of this Collection Period, "
        "from the last validation; the metadata says whether its certificate was published.",
    )
    def servicing_criteria_of_the_period(
        context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> dg.AssetCheckResult:
        period = context.partition_key
        try:  # the published warehouse: what the trustee sees, and no lock on a running build
            with warehouse_files.connect(warehouse.published_path, read_only=True) as con:
                found = period_results(con, since=period)
        except duckdb.Error:  # nothing published, or published before any validation
            found = []
        found = [p for p in found if p.collection_period == period]
        if not found:
            return dg.AssetCheckResult(
                passed=False,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={
                    "certificate": "not computed: the period's tape is not loaded or "
                    "the warehouse is not published yet"
                },
            )
        return dg.AssetCheckResult(**period_evaluation(found[0]))


def _table(rows: list[Summary]) -> str:
    lines = ["| representation | expectation | tested | failed |", "|---|---|---|---|"]
    lines += [
        f"| {r.representation} | {r.expectation_name} | {r.element_count} | {r.unexpected_count} |"
        for r in rows
    ]
    return "\n".join(lines)


def schedule_check_results(results: list[Summary]):
    for suite, (name, _description, _blocking) in SCHEDULE_CHECKS.items():
        rows = [r for r in results if r.suite_name == suite]
        blocking_failed = any(r.is_blocking and not r.is_success for r in rows)
        yield dg.AssetCheckResult(
            asset_key=REGISTER,
            check_name=name,
            passed=all(r.is_success for r in rows),
            severity=dg.AssetCheckSeverity.ERROR if blocking_failed else dg.AssetCheckSeverity.WARN,
            metadata={
                "expectations": len(rows),
                "failed_expectations": sum(not r.is_success for r in rows),
                "failing_rows": sum(r.unexpected_count for r in rows),
                "results": dg.MetadataValue.md(_table(rows)),
                "data_docs": str(data_docs_index()),
            },
        )


@dg.multi_asset_check(specs=SERVICING_CHECK_SPECS, name="servicing_criteria")
def servicing_criteria(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource):
    """Runs the servicing_criteria suite once and reports each criterion on its asset, and each
    recomputed Collection Period on its partition of the tape."""
    deal = warehouse.deal()
    with warehouse.connect() as con:
        outcomes, gate = validate_servicing(con, deal)
        rebuilt_from = last_rebuilt_from(con)
        periods = period_results(con)
    shown = {
        info.partition_key: info.latest_execution_status.value
        for info in context.instance.event_log_storage.get_asset_check_partition_info(
            [dg.AssetCheckKey(TAPE, PERIOD_CHECK)]
        )
    }
    for period in periods:
        # the periods this build recomputed, and any other whose shown result is not current
        key, status = period.collection_period, "FAILED" if period.failing else "SUCCEEDED"
        if key < rebuilt_from and shown.get(key) == status:
            continue
        # reported as this run's (Dagster's store keeps one runless evaluation per partition)
        context.instance.report_dagster_event(
            dg.DagsterEvent(
                event_type_value=dg.DagsterEventType.ASSET_CHECK_EVALUATION.value,
                event_specific_data=dg.AssetCheckEvaluation(
                    asset_key=TAPE,
                    check_name=PERIOD_CHECK,
                    partition=period.collection_period,
                    **period_evaluation(period),
                ),
                job_name=context.run.job_name,
            ),
            run_id=context.run.run_id,
        )
    withheld = [row.distribution_date.isoformat() for row in gate if not row.is_publishable]
    for criterion, (key, name) in SERVICING_CHECKS.items():
        mine = [o for o in outcomes if o.rule.representation == criterion]
        failing = sorted({period for o in mine for period, _ in o.offenders})
        yield dg.AssetCheckResult(
            asset_key=key,
            check_name=name,
            passed=all(o.success for o in mine),
            severity=dg.AssetCheckSeverity.WARN,
            metadata={
                "criterion": criterion,
                "periods_tested": mine[0].element_count if mine else 0,
                "failing_periods": ", ".join(failing) or "none",
                "expectations": dg.MetadataValue.md(
                    "\n".join(f"- {o.rule.rule}: {o.unexpected_count} failing" for o in mine)
                ),
                "certificates_withheld": ", ".join(withheld) or "none",
            },
        )
