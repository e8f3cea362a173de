"""What the ingestion assets do: load a shelf's files into `raw`, trust by trust.

Each function validates and loads through the loader (ingestion/loader.py), which answers whether a
file is already loaded; a rejected delivery is recorded (raw.deliveries, raw.quarantine) and
reported, never raised, so one trust's or one period's bad file withholds only the certificates
that depend on it (the certificate gate), and everything else loads and publishes.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from dagster_project.business_calendar import payment_periods
from dagster_project.checksums import sha256
from dagster_project.deal import Deal
from dagster_project.ingestion import schemas
from dagster_project.ingestion.deal_tables import load_deal_tables
from dagster_project.ingestion.deliveries import (
    AmbiguousDelivery,
    reference_file,
    tape_files,
    trust_dir,
)
from dagster_project.ingestion.ex102 import Ex102Error
from dagster_project.ingestion.holds import replace_holds
from dagster_project.ingestion.loader import (
    Delivery,
    IngestionError,
    LoadResult,
    ensure_table,
    load_deliveries,
    loaded_hashes,
    reject_folder,
)
from dagster_project.ingestion.validation import Finding


def load_megabytes() -> int:
    """How many megabytes of delivered files a pass validates and loads (one read, one check, one
    commit; CAOT_LOAD_MB, default 256). A pass has a cost of its own whatever it holds (its checks
    join the shelf's Receivable Schedules and the loaded periods next to its deliveries: about
    0.9 s at twenty trusts), so a pass takes as many deliveries as fit; its memory grows with
    them (DuckDB spills beyond its limit)."""
    return int(os.environ.get("CAOT_LOAD_MB", "256"))


@dataclass
class LoadReport:
    """What a load did, per (deal_id, scope)."""

    loaded: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[tuple[str, str]] = field(default_factory=list)
    not_delivered: list[tuple[str, str]] = field(default_factory=list)
    # tapes of a trust with no Receivable Schedule loaded (none delivered, or it was rejected):
    # not validated against nothing, not recorded; loaded by the run after the schedule is
    waiting: list[tuple[str, str]] = field(default_factory=list)
    rejected: list[IngestionError] = field(default_factory=list)

    def add(self, result: LoadResult | IngestionError) -> None:
        if isinstance(result, IngestionError):
            self.rejected.append(result)
        elif result.changed:
            self.loaded.append((result.deal_id, result.scope))
        else:
            self.unchanged.append((result.deal_id, result.scope))

    def summary(self) -> str:
        parts = [
            f"{len(self.loaded)} loaded",
            f"{len(self.unchanged)} unchanged",
            f"{len(self.rejected)} rejected",
        ]
        if self.not_delivered:
            parts.append(f"{len(self.not_delivered)} not delivered")
        return ", ".join(parts)

    def findings(self, limit: int = 20) -> list[str]:
        return [str(f) for error in self.rejected for f in error.findings][:limit]


def ensure_tables(con) -> None:
    """Every raw table, so that the dbt sources exist even for a format that does not deliver
    them (EX-102 has no payment transactions)."""
    for schema in (schemas.RECEIVABLE_SCHEDULE, *schemas.TAPE_SCHEMAS, *schemas.MARKET_SCHEMAS):
        ensure_table(con, schema)


def load_once_delivered(con, inputs: Path, deals: list[Deal], schema) -> LoadReport:
    """A file delivered once per trust (or once for the shelf), replaced whole when it changes."""
    report = LoadReport()
    if schema is schemas.INDEX_RATES:  # a trust with no floating-rate class needs no index
        deals = [d for d in deals if any(c.rate_type == "floating" for c in d.classes)]
    owners = [d.deal_id for d in deals] if schema.per_trust else [schemas.SHELF]
    for deal_id in owners:
        path = reference_file(inputs, deal_id, schema)
        if (schema.per_trust and not trust_dir(inputs, deal_id).is_dir()) or (
            schema.optional and not path.exists()
        ):
            report.not_delivered.append((deal_id, schema.kind))
            continue
        (result,) = load_deliveries(con, [Delivery(deal_id, schema.kind, [(schema, path)])])
        report.add(result)
    return report


def restated_schedule(con, inputs: Path, deal: Deal) -> tuple[Path, str] | None:
    """The trust's Receivable Schedule file and its SHA-256 when it differs from the one loaded
    (None when it is the same, or none is loaded yet)."""
    schema = schemas.RECEIVABLE_SCHEDULE
    path = reference_file(inputs, deal.deal_id, schema)
    loaded = loaded_hashes(con, deal.deal_id, schema.kind).get(schema.kind)
    if not loaded or not path.is_file():
        return None
    digest = sha256(path)
    return (path, digest) if digest != loaded else None


def rejected_schedule(inputs: Path, deal: Deal, shelf: list[Deal]) -> bool:
    """Whether the trust's delivered Receivable Schedule is one validation rejects, checked in a
    scratch warehouse in memory holding the shelf's deal terms (what the checks read besides
    the file): a schedule re-delivered while tapes are loaded is not loaded by a monthly run,
    but its findings are known at once."""
    schema = schemas.RECEIVABLE_SCHEDULE
    scratch = duckdb.connect()
    try:
        load_deal_tables(scratch, shelf)
        path = reference_file(inputs, deal.deal_id, schema)
        (result,) = load_deliveries(
            scratch, [Delivery(deal.deal_id, schema.kind, [(schema, path)])]
        )
    finally:
        scratch.close()
    return isinstance(result, IngestionError)


def hold_schedules(con, inputs: Path, deals: list[Deal], now) -> dict[str, str]:
    """The trusts whose delivered Receivable Schedule is not the one loaded, each with why: one
    re-delivered with changes (every computed period depends on it: the full rebuild loads it),
    or one rejected (the schedule loaded before stands). The certificate gate withholds each such
    trust's certificates (quality/runs.py trust_holds) until the file and the loaded
    schedule agree again; the other trusts are not affected. raw.schedule_holds holds them,
    replaced whole at each call."""
    holds: dict[str, tuple[Path, str]] = {}
    for deal in deals:
        restated = restated_schedule(con, inputs, deal)
        if restated is None:
            continue
        path, digest = restated
        (finding,) = con.execute(
            "select any_value(first_finding order by loaded_at desc) from raw.deliveries "
            "where deal_id = ? and file_kind = ? and sha256 = ? and status = 'rejected'",
            [deal.deal_id, schemas.RECEIVABLE_SCHEDULE.kind, digest],
        ).fetchone()
        holds[deal.deal_id] = (
            path,
            f"the file delivered was rejected: {finding}"  # the finding names file, row, field
            if finding
            else f"the file delivered ({path}) differs from the one loaded, on "
            "which every computed period depends: load it with the full rebuild, python -m "
            "dagster_project.pipeline --rebuild",
        )
    replace_holds(con, "schedule_holds", holds, now)
    return {deal_id: why for deal_id, (_path, why) in holds.items()}


def _delivery(deal: Deal, folder: Path, period) -> Delivery | IngestionError:
    try:
        files = tape_files(folder)
    except (Ex102Error, AmbiguousDelivery) as error:
        return IngestionError(
            deal.deal_id, period.collection_period, [Finding(str(folder), None, None, str(error))]
        )
    return Delivery(
        deal.deal_id,
        period.collection_period,
        files,
        period.collection_period_start,
        period.collection_period_end,
    )


def load_tapes(
    con,
    deliveries_of: dict[str, Path],
    deals: dict[str, Deal],
    keys: list[tuple[str, str]],
    log=print,
) -> LoadReport:
    """Load the monthly tapes of `keys` ((deal_id, Collection Period)), each from the folder
    deliveries_of[deal_id] / period, a few periods per pass; a period without a folder is
    reported as not delivered, one of a trust whose Receivable Schedule is not loaded as
    waiting (its receivables cannot be checked against the schedule)."""
    report = LoadReport()
    pending: list[Delivery] = []
    calendars = {
        deal_id: {p.collection_period: p for p in payment_periods(deal)}
        for deal_id, deal in deals.items()
    }
    ensure_table(con, schemas.RECEIVABLE_SCHEDULE)
    scheduled = {
        deal_id
        for (deal_id,) in con.execute(
            "select distinct deal_id from raw.receivable_schedule"
        ).fetchall()
    }
    for deal_id, key in keys:
        deal = deals[deal_id]
        period = calendars[deal_id].get(key)
        folder = deliveries_of[deal_id] / key
        if period is None or not folder.is_dir():  # not a Collection Period of the trust
            report.not_delivered.append((deal_id, key))
            continue
        delivery = _delivery(deal, folder, period)
        if isinstance(delivery, IngestionError):
            reject_folder(con, deal_id, key, folder, delivery.findings[0])
            report.rejected.append(delivery)
        elif deal_id not in scheduled:
            report.waiting.append((deal_id, key))
        else:
            pending.append(delivery)
    waiting: dict[str, int] = {}
    for deal_id, _period in report.waiting:
        waiting[deal_id] = waiting.get(deal_id, 0) + 1
    for deal_id, count in waiting.items():
        periods = f"{count} period{'s' if count > 1 else ''}"
        log(f"{deal_id}: {periods} wait for its Receivable Schedule (none is loaded)")
    position = 0
    while position < len(pending):
        chunk = _next_pass(pending[position:])
        for result in load_deliveries(con, chunk):
            report.add(result)
        position += len(chunk)
        if len(keys) > 1:
            first, last = chunk[0], chunk[-1]
            upto = last.scope if last.deal_id == first.deal_id else f"{last.deal_id} {last.scope}"
            log(f"{first.deal_id} {first.scope}..{upto}: {report.summary()}")
    return report


def _next_pass(deliveries: list[Delivery]) -> list[Delivery]:
    """The first deliveries whose files are of the same kinds, as many as fit in
    load_megabytes() (the first one whatever its size)."""
    kinds = [schema.kind for schema, _ in deliveries[0].files]
    budget = load_megabytes() * 2**20 - _size(deliveries[0])
    chunk = [deliveries[0]]
    for delivery in deliveries[1:]:
        budget -= _size(delivery)
        if [schema.kind for schema, _ in delivery.files] != kinds or budget < 0:
            break
        chunk.append(delivery)
    return chunk


def _size(delivery: Delivery) -> int:
    return sum(path.stat().st_size for _schema, path in delivery.files if path.exists())
