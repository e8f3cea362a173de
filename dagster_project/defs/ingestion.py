"""Ingestion assets: the shelf's deal terms, each trust's Receivable Schedule, the market inputs and
the monthly tapes, validated and loaded into `raw` (dagster_project/ingestion/).

A run loads the trusts of its partitions (every trust when it has none). A rejected delivery is
recorded and reported on the check `deliveries_accepted`; it does not fail the run, so the other
periods and trusts are built and published and the certificate gate withholds the rejected
period's certificates with the reason.
"""

import datetime as dt
from pathlib import Path

import dagster as dg

from dagster_project.deal import Deal
from dagster_project.ingestion import schemas
from dagster_project.ingestion.deal_tables import hold_deal_files, load_deal_tables, term_changes
from dagster_project.ingestion.deliveries import trust_dir
from dagster_project.ingestion.loads import (
    LoadReport,
    ensure_tables,
    hold_schedules,
    load_once_delivered,
    load_tapes,
    rejected_schedule,
    restated_schedule,
)
from dagster_project.partitions import TRUST_PERIODS, run_partitions
from dagster_project.resources import WarehouseResource

ACCEPT_DEAL_CHANGES = "caot/accept_deal_changes"  # run tag: apply changed deal files


def run_trusts(context, warehouse: WarehouseResource) -> list[Deal]:
    """The trusts of the run's partitions (the whole shelf for a run without partitions)."""
    shelf = warehouse.shelf()
    keys = run_partitions(context)
    if keys is None:
        return shelf
    wanted = {k.deal_id for k in keys}
    return [d for d in shelf if d.deal_id in wanted]


def _raw(name: str, description: str, **kwargs) -> dg.AssetSpec:
    return dg.AssetSpec(
        ["raw", name], description=description, group_name="ingestion", kinds={"duckdb"}, **kwargs
    )


def _has_tapes(con, deal_id: str) -> bool:
    return con.execute(
        "select count(*) > 0 from raw.loan_status where deal_id = ?", [deal_id]
    ).fetchone()[0]


# (the specs are built where they are used: a module-level spec would be collected as a second
# definition of its asset by Dagster's defs loader)
DEAL_TABLES = {
    "deals": "One row per trust: the terms of its deal file, typed, each with its section.",
    "deal_classes": "Each trust's note classes in certificate order.",
    "payment_calendar": "Each trust's Distribution Dates, Collection Periods and accrual periods.",
    "certificate_layout": "Exhibit A's lines laid out for each trust's classes and form.",
}


DEALS = dg.AssetKey(["raw", "deals"])


@dg.multi_asset(
    specs=[_raw(name, description) for name, description in DEAL_TABLES.items()],
    name="deal_terms",
    check_specs=[
        dg.AssetCheckSpec(
            "deal_files_accepted",
            asset=DEALS,
            description="No trust's deal file changed since its certificates were computed "
            "without the change being accepted (a changed one is held: its terms loaded before "
            "stand and its certificates are withheld until a run accepts it).",
        )
    ],
)
def deal_terms(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    """The deal files of the run's trusts. A deal file that changed since its certificates were
    computed is not applied silently: its trust is held (hold_deal_files: the terms loaded before
    stand in the deal tables, the certificate gate withholds its certificates, the run says what
    changed and exits 3), the other trusts run on, until a run's tags accept the change (`python -m
    dagster_project.pipeline --rebuild --accept-deal-changes`)."""
    deals = run_trusts(context, warehouse)
    accepted = context.run.tags.get(ACCEPT_DEAL_CHANGES) == "true"
    with warehouse.connect() as con:
        ensure_tables(con)  # every raw table, as this version writes it (or a clear error)
        changed = {
            d.deal_id: term_changes(con, d) for d in warehouse.shelf() if _has_tapes(con, d.deal_id)
        }
        changed = {deal_id: found for deal_id, found in changed.items() if found}
        # a change is applied by a run of its trust that accepts it; held until then
        applied = {d.deal_id for d in deals if accepted and d.deal_id in changed}
        held = {deal_id: found for deal_id, found in changed.items() if deal_id not in applied}
        holds = hold_deal_files(con, warehouse.shelf(), held, dt.datetime.now(dt.UTC))
        counts = load_deal_tables(con, [d for d in deals if d.deal_id not in holds])
    for deal_id, why in holds.items():
        context.log.error(f"{deal_id}: certificates withheld, {why}")
    for table in DEAL_TABLES:
        yield dg.MaterializeResult(
            asset_key=["raw", table],
            metadata={
                "trusts": ", ".join(d.deal_id for d in deals),
                "rows": counts[table],
                "deal_file_changes_applied": ", ".join(sorted(applied)) or "none",
            },
        )
    yield dg.AssetCheckResult(
        check_name="deal_files_accepted",
        asset_key=DEALS,
        passed=not holds,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "deal_files_held": ", ".join(holds) or "none",
            "reasons": dg.MetadataValue.md(
                "\n".join(f"- {deal_id}: {why}" for deal_id, why in holds.items()) or "none"
            ),
        },
    )


def _report_metadata(report: LoadReport) -> dict:
    return {
        "loaded": len(report.loaded),
        "unchanged": len(report.unchanged),
        "rejected": len(report.rejected),
        "not_delivered": len(report.not_delivered),
        "waiting_for_schedule": len(report.waiting),
        "first_findings": dg.MetadataValue.md(
            "\n".join(f"- {f}" for f in report.findings()) or "none"
        ),
    }


SCHEDULE = dg.AssetKey(["raw", "receivable_schedule"])


@dg.asset(
    key=SCHEDULE,
    description="Schedule 1, each trust's Receivable Schedule as of its Cutoff Date (validated "
    "against Section 2.3 by quality/eligibility_exceptions).",
    group_name="ingestion",
    kinds={"duckdb"},
    deps=[dg.AssetKey(["raw", "deals"])],
    check_specs=[
        dg.AssetCheckSpec(
            "deliveries_accepted",
            asset=SCHEDULE,
            description="Every Receivable Schedule of the run passed validation (a rejected one is "
            "in raw.quarantine; its trust's tapes wait for a schedule, its certificates are "
            "withheld).",
        )
    ],
)
def receivable_schedule(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    """A restated schedule of a trust whose tapes are loaded touches every row computed from it:
    a run with partitions leaves it for the full rebuild, which loads it, and the trust's
    certificates are withheld until then (hold_schedules); the other trusts run on."""
    deals = run_trusts(context, warehouse)
    with warehouse.connect() as con:
        ensure_tables(con)
        if run_partitions(context) is not None:
            # a restated schedule is loaded by the full rebuild; one that would be rejected is
            # loaded (so rejected, its findings recorded) now, the schedule loaded before standing
            deals = [
                deal
                for deal in deals
                if not restated_schedule(con, warehouse.inputs, deal)
                or not _has_tapes(con, deal.deal_id)
                or rejected_schedule(warehouse.inputs, deal, warehouse.shelf())
            ]
        report = load_once_delivered(con, warehouse.inputs, deals, schemas.RECEIVABLE_SCHEDULE)
        holds = hold_schedules(con, warehouse.inputs, warehouse.shelf(), dt.datetime.now(dt.UTC))
    for error in report.rejected:
        context.log.error(str(error))
    for deal_id, why in holds.items():
        context.log.error(f"{deal_id}: certificates withheld, its Receivable Schedule: {why}")
    metadata = _report_metadata(report) | {
        "schedules_held": dg.MetadataValue.md(
            "\n".join(f"- {deal_id}: {why}" for deal_id, why in holds.items()) or "none"
        )
    }
    yield dg.MaterializeResult(asset_key=SCHEDULE, metadata=metadata)
    yield _accepted(SCHEDULE, report, metadata, held=list(holds))


MARKET_TABLES = {
    "index_rates": "Each trust's floating index (1-month LIBOR, SOFR) per accrual period.",
    "tangible_net_worth": "CarMax, Inc. Consolidated Tangible Net Worth per fiscal quarter.",
    "trust_account_earnings": "Each trust's Collection and Reserve Account earnings.",
    "exception_decisions": "The servicer's decisions on the auditor's exceptions (waived, "
    "reopened), when a trust delivers them.",
}


@dg.multi_asset(
    specs=[_raw(name, description) for name, description in MARKET_TABLES.items()],
    check_specs=[
        dg.AssetCheckSpec(
            "deliveries_accepted",
            asset=["raw", name],
            description="The file passed validation (a rejected one is in raw.quarantine; the "
            "copy loaded before stands).",
        )
        for name in MARKET_TABLES
    ],
    name="market_inputs",
)
def market_inputs(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    deals = run_trusts(context, warehouse)
    with warehouse.connect() as con:
        for schema in schemas.MARKET_SCHEMAS:
            report = load_once_delivered(con, warehouse.inputs, deals, schema)
            for error in report.rejected:
                context.log.error(str(error))
            key = dg.AssetKey(["raw", schema.kind])
            metadata = _report_metadata(report)
            yield dg.MaterializeResult(asset_key=key, metadata=metadata)
            yield _accepted(key, report, metadata)


# One asset for a trust's monthly delivery, written to three tables (the dbt sources loan_status,
# payment_transactions and deliveries all map to it, dbt/models/staging/_sources.yml): a run over
# a range of (trust, Collection Period) partitions records each partition once per asset.
TAPES = dg.AssetKey(["raw", "monthly_tapes"])


@dg.asset(
    key=TAPES,
    deps=[dg.AssetKey(["raw", "receivable_schedule"]), dg.AssetKey(["raw", "payment_calendar"])],
    group_name="ingestion",
    kinds={"duckdb"},
    partitions_def=TRUST_PERIODS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    check_specs=[
        dg.AssetCheckSpec(
            "deliveries_accepted",
            asset=TAPES,
            description="Every delivery of the run passed validation (a rejected one is in "
            "raw.quarantine; its certificate and the later ones are withheld).",
        )
    ],
    description="One delivery per trust and Collection Period: the loan-level status file and "
    "the payment transactions, or one SEC EX-102 file; validated and loaded atomically into "
    "raw.loan_status (Schedule AL field names) and raw.payment_transactions, each file recorded "
    "in the delivery ledger raw.deliveries (loaded, superseded, or rejected with its first "
    "finding and its rows in raw.quarantine).",
)
def monthly_tapes(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    deals = {d.deal_id: d for d in warehouse.shelf()}
    keys = [(k.deal_id, k.period) for k in run_partitions(context) or []]
    valid = [(deal_id, period) for deal_id, period in keys if deal_id in deals]
    # a run the inbox sensor launched reads its delivery where it landed (one partition)
    landed = context.run.tags.get("caot/delivery_dir") if len(valid) == 1 else None
    folders = {deal_id: trust_dir(warehouse.inputs, deal_id) / "deliveries" for deal_id, _ in valid}
    if landed:
        folders = {valid[0][0]: Path(landed).parent}
    with warehouse.connect() as con:
        ensure_tables(con)
        report = load_tapes(con, folders, deals, valid, log=context.log.info)
    for error in report.rejected:
        context.log.error(str(error))
    metadata = _report_metadata(report)
    yield dg.MaterializeResult(asset_key=TAPES, metadata=metadata)
    yield _accepted(TAPES, report, metadata)


def _accepted(
    asset: dg.AssetKey, report, metadata: dict, held: list[str] = ()
) -> dg.AssetCheckResult:
    """The asset's deliveries_accepted check: failed when a delivery of the run was rejected, or
    a trust's delivered Receivable Schedule is `held` (not the one loaded): the command line then
    exits 3."""
    return dg.AssetCheckResult(
        check_name="deliveries_accepted",
        asset_key=asset,
        passed=not report.rejected and not held,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "rejected": ", ".join(f"{e.deal_id} {e.scope}" for e in report.rejected) or "none",
            "first_findings": metadata["first_findings"],
            "schedules_held": ", ".join(held) or "none",
        },
    )
