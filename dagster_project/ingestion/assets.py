"""Ingestion assets: deal terms, the Receivable Schedule, the monthly tapes, the market inputs."""

import os
from pathlib import Path

import dagster as dg
import duckdb

from dagster_project import warehouse as warehouse_files
from dagster_project.business_calendar import period_for_collection_month
from dagster_project.checksums import sha256
from dagster_project.ingestion import ex102, schemas
from dagster_project.ingestion.deal_tables import deal_tables_current, load_deal_tables
from dagster_project.ingestion.loader import (
    Delivery,
    IngestionError,
    current_hashes,
    ensure_table,
    load_deliveries,
    load_files,
)
from dagster_project.ingestion.partitions import COLLECTION_PERIODS
from dagster_project.ingestion.validation import Finding
from dagster_project.resources import WarehouseResource

FORMATS = ("csv", "csv.gz", "parquet")  # an EX-102 delivery is any *.xml (tape_files)
LOAD_CHUNK = 6  # Collection Periods validated and loaded per pass


def chunks(deliveries: list) -> list[tuple[int, list]]:
    """(offset, deliveries) of at most LOAD_CHUNK consecutive periods of one format each."""
    out, start = [], 0
    while start < len(deliveries):
        kinds = [schema.kind for schema, _ in deliveries[start].files]
        end = start + 1
        while (
            end < len(deliveries)
            and end - start < LOAD_CHUNK
            and [schema.kind for schema, _ in deliveries[end].files] == kinds
        ):
            end += 1
        out.append((start, deliveries[start:end]))
        start = end
    return out


def tape_files(folder: Path) -> list[tuple[schemas.FileSchema, Path]]:
    """A period's delivery: the tape and its transactions (CSV or Parquet), or one SEC EX-102
    XML file (no transactions; of several pool variants, the one CAOT_EX102_VARIANT names)."""
    filings = sorted(folder.glob("*.xml"))
    if filings:
        return [
            (schemas.LOAN_STATUS, ex102.choose_file(filings, os.environ.get("CAOT_EX102_VARIANT")))
        ]
    return [
        (schemas.LOAN_STATUS, find_file(folder, "loan_status")),
        (schemas.PAYMENT_TRANSACTIONS, find_file(folder, "payment_transactions")),
    ]


def find_file(folder: Path, stem: str) -> Path:
    """The delivered file `stem.<format>` in `folder` (the first format present)."""
    for ext in FORMATS:
        candidate = folder / f"{stem}.{ext}"
        if candidate.exists():
            return candidate
    return folder / f"{stem}.csv"  # missing: validation reports it by this name


def _fail(error: IngestionError) -> dg.Failure:
    return dg.Failure(
        description=str(error),
        metadata={
            "findings": len(error.findings),
            "first_findings": dg.MetadataValue.md("\n".join(f"- {f}" for f in error.findings[:20])),
        },
    )


def _raw(name: str, description: str, **kwargs) -> dg.AssetSpec:
    return dg.AssetSpec(
        ["raw", name], description=description, group_name="ingestion", kinds={"duckdb"}, **kwargs
    )


DEAL_SPECS = [
    _raw("deal_terms", "Deal terms from the deal file, each with its section."),
    _raw("deal_classes", "Note classes in certificate order."),
    _raw("payment_calendar", "Distribution Dates, Collection Periods and accrual periods."),
    _raw("certificate_layout", "Exhibit A's lines laid out for the deal's classes."),
]


@dg.multi_asset(specs=DEAL_SPECS, name="deal_terms")
def deal_terms(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    deal = warehouse.deal()
    with warehouse.connect() as con:
        counts = load_deal_tables(con, deal)
    for spec in DEAL_SPECS:
        table = spec.key.path[-1]
        yield dg.MaterializeResult(
            asset_key=spec.key, metadata={"deal_file": str(deal.path), "rows": counts[table]}
        )


@dg.asset(
    key=["raw", "receivable_schedule"],
    description="Schedule 1, the Receivable Schedule as of the Cutoff Date (validated against "
    "Section 2.3 by quality/eligibility_exceptions).",
    group_name="ingestion",
    kinds={"duckdb"},
    deps=[dg.AssetKey(["raw", "deal_terms"])],
)
def receivable_schedule(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    path = find_file(Path(warehouse.input_dir), "receivable_schedule")
    with warehouse.connect() as con:
        try:
            result = load_files(con, "schedule", [(schemas.RECEIVABLE_SCHEDULE, path)])
        except IngestionError as error:
            raise _fail(error) from error
        count, balance = con.execute(
            "select count(*), sum(principal_balance) from raw.receivable_schedule"
        ).fetchone()
        for tape in schemas.TAPE_SCHEMAS:  # an EX-102 deal delivers no transactions at all
            ensure_table(con, tape)
    return dg.MaterializeResult(
        metadata={
            "file": str(path),
            "changed": result.changed,
            "receivables": count,
            "cutoff_pool_balance": str(balance),
        },
    )


def reference_inputs_loaded(warehouse: WarehouseResource) -> bool:
    """Whether the deal tables, the Receivable Schedule and the market inputs are loaded as the
    deal file and the input files are now: a run of their assets would change nothing, so the
    pipeline does not start one (the schedule's Section 2.3 validation decides for itself:
    quality/eligibility_register.py)."""
    work = Path(warehouse.work_path)
    if not work.exists():
        return False
    files = [("schedule", "receivable_schedule")]
    files += [(schema.kind, schema.kind) for schema in schemas.MARKET_SCHEMAS]
    with warehouse_files.connect(work, read_only=True) as con:
        try:
            if not deal_tables_current(con, warehouse.deal()):
                return False
            for scope, kind in files:
                path = find_file(Path(warehouse.input_dir), kind)
                if not path.exists() or current_hashes(con, scope).get(kind) != sha256(path):
                    return False
        except duckdb.Error:  # nothing loaded yet
            return False
    return True


MARKET_SPECS = [
    _raw("libor_rates", "1-month LIBOR per accrual period of the floating-rate class."),
    _raw("tangible_net_worth", "CarMax, Inc. Consolidated Tangible Net Worth per fiscal quarter."),
    _raw(
        "trust_account_earnings", "Collection and Reserve Account earnings per Distribution Date."
    ),
]


@dg.multi_asset(specs=MARKET_SPECS, name="market_inputs")
def market_inputs(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    with warehouse.connect() as con:
        for schema, spec in zip(schemas.MARKET_SCHEMAS, MARKET_SPECS, strict=True):
            path = find_file(Path(warehouse.input_dir), schema.kind)
            try:
                result = load_files(con, schema.kind, [(schema, path)])
            except IngestionError as error:
                raise _fail(error) from error
            yield dg.MaterializeResult(
                asset_key=spec.key,
                metadata={"file": str(path), "rows": result.rows.get(schema.kind, "unchanged")},
            )


TAPE_SPECS = [
    _raw(
        "loan_status",
        "Monthly loan-level status tape (Schedule AL field names).",
        deps=[dg.AssetKey(["raw", "receivable_schedule"])],
    ),
    _raw(
        "payment_transactions",
        "Monthly payment transactions.",
        deps=[dg.AssetKey(["raw", "receivable_schedule"])],
    ),
]


@dg.multi_asset(
    specs=TAPE_SPECS,
    name="monthly_tape",
    partitions_def=COLLECTION_PERIODS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description="One monthly delivery per Collection Period: the loan-level status "
    "file and the payment transactions, validated, loaded atomically.",
)
def monthly_tape(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    deal = warehouse.deal()
    keys = context.partition_keys
    # A run the inbox sensor launched reads its delivery where it landed (one partition).
    landed = context.run.tags.get("caot/delivery_dir") if len(keys) == 1 else None
    loaded, unchanged, failures = [], [], []
    deliveries = []
    for key in keys:
        period = period_for_collection_month(deal, key)
        folder = Path(landed) if landed else warehouse.deliveries_dir / key
        try:
            files = tape_files(folder)
        except ex102.Ex102Error as error:
            failures.append(IngestionError(key, [Finding(str(folder), None, None, str(error))]))
            continue
        deliveries.append(
            Delivery(key, files, period.collection_period_start, period.collection_period_end)
        )
    with warehouse.connect() as con:
        # A few periods per pass: one read, one check query and one commit per chunk, and a run
        # killed midway keeps the chunks it committed (each period still loads whole or not).
        for first, chunk in chunks(deliveries):
            for delivery, result in zip(chunk, load_deliveries(con, chunk), strict=True):
                if isinstance(result, IngestionError):
                    failures.append(result)
                    context.log.error(str(result))
                else:
                    (loaded if result.changed else unchanged).append(delivery.scope)
            if len(keys) > 1:
                context.log.info(
                    f"[{first + len(chunk)}/{len(keys)}] {chunk[0].scope}..{chunk[-1].scope}: "
                    f"{len(loaded)} loaded, {len(unchanged)} unchanged, {len(failures)} rejected"
                )
    if failures:
        raise _fail(
            IngestionError(
                ", ".join(f.scope for f in failures),
                [f for error in failures for f in error.findings],
            )
        )
    for spec in TAPE_SPECS:
        yield dg.MaterializeResult(
            asset_key=spec.key,
            metadata={"periods_loaded": len(loaded), "periods_unchanged": len(unchanged)},
        )
