"""Transactional, idempotent loading of validated files into the `raw` schema.

This is the one place that answers "is this delivery already loaded": a delivery is a trust's
file of a kind for a scope (a Collection Period, or the file kind for files delivered once), and
raw.deliveries records each file's SHA-256.

- The same file (same SHA-256) loaded twice changes nothing, whatever its name.
- A file with any finding is rejected whole: its failing rows go to raw.quarantine with the
  reason and the full record, and the rows already loaded for that trust and scope stay as they
  were.
- A different file for a scope already loaded is a restatement: it replaces that trust's rows of
  the scope in one transaction, and the earlier delivery stays in raw.deliveries, superseded.
- A Collection Period's tapes are complete only after the period ends: one delivered on or before
  its last day (in New York, where the servicer closes its books) is rejected.
"""

import datetime as dt
import hashlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from dagster_project.checksums import sha256
from dagster_project.ingestion.schemas import TAPE_SCHEMAS, FileSchema
from dagster_project.ingestion.validation import (
    TEXT,
    TYPED,
    Finding,
    Key,
    Staging,
    check_rows,
    findings_table,
    numbered_stage,
    passes_checks,
    prepare_files,
    stage_files,
    stage_periods,
    stage_typed,
)
from dagster_project.warehouse import insert_rows, table_exists, transaction

SERVICER_TIMEZONE = ZoneInfo("America/New_York")

AUDIT_DDL = """
create schema if not exists raw;
create table if not exists raw.deliveries (
    delivery_id varchar, deal_id varchar, file_kind varchar, scope varchar, file_path varchar,
    sha256 varchar, row_count bigint, status varchar, finding_count bigint,
    first_finding varchar, loaded_at timestamptz, superseded_at timestamptz
);
create table if not exists raw.quarantine (
    delivery_id varchar, deal_id varchar, file_kind varchar, scope varchar, file_path varchar,
    row_number bigint, field varchar, reason varchar, value varchar, record json,
    quarantined_at timestamptz
);
"""

AUDIT_COLUMNS = {
    "raw.deliveries": ["delivery_id", "deal_id", "file_kind", "scope", "file_path", "sha256",
                       "row_count", "status", "finding_count", "first_finding", "loaded_at",
                       "superseded_at"],
    "raw.quarantine": ["delivery_id", "deal_id", "file_kind", "scope", "file_path", "row_number",
                       "field", "reason", "value", "record", "quarantined_at"],
}  # fmt: skip


class IngestionError(Exception):
    """A delivery was rejected; `findings` name the file, row and field of each problem."""

    def __init__(self, deal_id: str, scope: str, findings: list[Finding], count: int = 0):
        """`findings`: the first of each file's findings; `count`: all of them (raw.quarantine
        holds every one)."""
        self.deal_id, self.scope, self.findings = deal_id, scope, findings
        self.count = max(count, len(findings))
        shown = "\n  ".join(str(f) for f in findings[:12])
        more = f"\n  ... and {self.count - 12} more" if self.count > 12 else ""
        super().__init__(
            f"delivery {scope} of {deal_id} rejected ({self.count} findings; rows "
            f"quarantined in raw.quarantine, nothing loaded):\n  {shown}{more}"
        )


@dataclass
class LoadResult:
    deal_id: str
    scope: str
    changed: bool
    rows: dict[str, int] = field(default_factory=dict)
    restated: bool = False


def scope_columns(schema: FileSchema) -> str:
    """The columns a raw table keys its rows by, before the delivered columns."""
    if schema.per_period:
        return "deal_id varchar, collection_period varchar, delivery_id varchar"
    return "deal_id varchar, delivery_id varchar"


class WarehouseLayoutError(Exception):
    """The warehouse's raw tables are not the ones this version writes (an older warehouse)."""


def _check_columns(con, table: str, expected: list[str]) -> None:
    schema_name, name = table.split(".")
    actual = [
        row[0]
        for row in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = ? and table_name = ? order by ordinal_position",
            [schema_name, name],
        ).fetchall()
    ]
    if actual != expected:
        missing = [c for c in expected if c not in actual]
        extra = [c for c in actual if c not in expected]
        raise WarehouseLayoutError(
            f"{table} in the warehouse has other columns than this version writes (missing: "
            f"{', '.join(missing) or 'none'}; not expected: {', '.join(extra) or 'none'}): it "
            "was written by an earlier version. Move the warehouse files aside (the working and "
            "the published one) and run again: every delivery is reloaded from the input folder."
        )


def ensure_table(con, schema: FileSchema) -> None:
    con.execute(AUDIT_DDL)
    _check_columns(con, "raw.deliveries", AUDIT_COLUMNS["raw.deliveries"])
    _check_columns(con, "raw.quarantine", AUDIT_COLUMNS["raw.quarantine"])
    columns = ", ".join(f'"{c.name}" {c.type}' for c in schema.columns)
    con.execute(f"create table if not exists {schema.table} ({scope_columns(schema)}, {columns})")
    keys = [column.split()[0] for column in scope_columns(schema).split(", ")]
    _check_columns(con, schema.table, keys + [c.name for c in schema.columns])


def loaded_hashes(con, deal_id: str, scope: str) -> dict[str, str]:
    """The SHA-256 of each file kind loaded for a trust's scope."""
    con.execute(AUDIT_DDL)
    rows = con.execute(
        "select file_kind, sha256 from raw.deliveries "
        "where deal_id = ? and scope = ? and status = 'loaded'",
        [deal_id, scope],
    ).fetchall()
    return dict(rows)


@dataclass(frozen=True)
class Delivery:
    """One trust's files of one scope: a Collection Period's tapes (with the period's bounds),
    or a file delivered once (the Receivable Schedule, index rates, earnings)."""

    deal_id: str
    scope: str
    files: list[tuple[FileSchema, Path]]
    period_start: dt.date | None = None
    period_end: dt.date | None = None

    @property
    def key(self) -> Key:
        return (self.deal_id, self.scope)


def load_files(con, deal_id: str, scope: str, files: list[tuple[FileSchema, Path]]) -> LoadResult:
    """Validate and load `files` as one unit; raise IngestionError if rejected."""
    (result,) = load_deliveries(con, [Delivery(deal_id, scope, files)])
    if isinstance(result, IngestionError):
        raise result
    return result


def load_deliveries(
    con, deliveries: list[Delivery], today: dt.date | None = None
) -> list[LoadResult | IngestionError]:
    """Validate and load several deliveries of the same file kinds in one pass (one read per file
    kind, one check query, one transaction for every clean delivery); each is still accepted or
    rejected whole, and a rejected one leaves what was loaded for it before untouched. Results in
    the given order. `today`: the servicer's date (default: now in New York)."""
    kinds = [schema for schema, _ in deliveries[0].files] if deliveries else []
    for schema in kinds:
        ensure_table(con, schema)
    results: dict[Key, LoadResult | IngestionError] = {}
    hashes, loaded = {}, {}
    for delivery in deliveries:
        key = delivery.key
        hashes[key] = {
            schema.kind: sha256(path) if path.is_file() else "" for schema, path in delivery.files
        }
        loaded[key] = loaded_hashes(con, *key)
        if all(loaded[key].get(kind) == digest for kind, digest in hashes[key].items()):
            results[key] = LoadResult(*key, changed=False)
    pending = [d for d in deliveries if d.key not in results]
    if pending:
        today = today or dt.datetime.now(SERVICER_TIMEZONE).date()
        _validate_and_load(con, kinds, pending, hashes, loaded, results, today)
    return [results[d.key] for d in deliveries]


def _too_early(delivery: Delivery, today: dt.date) -> list[Finding]:
    if delivery.period_end is None or delivery.period_end < today:
        return []
    return [
        Finding(
            str(delivery.files[0][1]),
            None,
            None,
            f"Collection Period {delivery.scope} ends on {delivery.period_end} and today is "
            f"{today}: its tape can only be complete after the period ends (is the folder name "
            "or the clock wrong?)",
        )
    ]


def _validate_and_load(con, kinds, pending, hashes, loaded, results, today) -> None:
    """Stage and check every pending delivery; reject those with a finding, load the others.
    The batch is read typed first: when that passes every check (the usual delivery), it is
    loaded from there. Otherwise it is read again as text and checked, delivery by delivery: per
    delivery and file kind, `whole` holds the findings about the file as a whole (its header, its
    reading, its delivery date), `rows` the first of the row checks' findings (all of them stay in
    the checks' temp table, which quarantines them)."""
    periods = {d.key: (d.period_start, d.period_end) for d in pending if d.period_start is not None}
    if periods:
        stage_periods(con, periods)
    paths = {d.key: {schema.kind: path for schema, path in d.files} for d in pending}
    try:
        with tempfile.TemporaryDirectory(prefix="caot_stage_") as workdir:
            prepared = {
                schema.kind: prepare_files(
                    schema, {d.key: paths[d.key][schema.kind] for d in pending}, Path(workdir)
                )
                for schema in kinds
            }
            now = dt.datetime.now(dt.UTC)
            if _passes_typed(con, kinds, pending, prepared, bool(periods), today):
                _load(con, kinds, pending, paths, hashes, loaded, now, results, TYPED)
                return
            whole: dict[Key, dict[str, list[Finding]]] = {d.key: {} for d in pending}
            rows: dict[Key, dict[str, list[Finding]]] = {d.key: {} for d in pending}
            for schema in kinds:
                batch = prepared[schema.kind]
                file_level = stage_files(con, schema, batch)
                readable = {key: path for key, path in batch.files.items() if not file_level[key]}
                checked = check_rows(con, schema, readable, periods) if readable else {}
                for key in batch.files:
                    whole[key][schema.kind] = file_level[key]
                    rows[key][schema.kind] = checked.get(key, [])
        for delivery in pending:
            whole[delivery.key][kinds[0].kind] += _too_early(delivery, today)
        clean = []
        for delivery in pending:
            key = delivery.key
            shown = {kind: whole[key][kind] + rows[key][kind] for kind in whole[key]}
            if not any(shown.values()):
                clean.append(delivery)
                continue
            files = [(schema, paths[key][schema.kind]) for schema in kinds]
            count = _reject(con, delivery, files, hashes[key], whole[key], shown, now)
            results[key] = IngestionError(
                delivery.deal_id,
                delivery.scope,
                [f for group in shown.values() for f in group],
                count,
            )
        if clean:
            _load(con, kinds, clean, paths, hashes, loaded, now, results, TEXT)
    finally:
        _drop_stages(con, kinds)


def _passes_typed(con, kinds, pending, prepared, with_periods: bool, today) -> bool:
    """Whether the batch, read typed, has no finding at all (then every delivery is clean)."""
    if any(_too_early(delivery, today) for delivery in pending):
        return False
    return all(
        stage_typed(con, schema, prepared[schema.kind]) and passes_checks(con, schema, with_periods)
        for schema in kinds
    )


def _delivery_id(kind: str, key: Key, digest: str) -> str:
    return f"{kind}:{key[0]}:{key[1]}:{digest[:16]}"


def _load(con, kinds, clean, paths, hashes, loaded, now, results, staging: Staging) -> None:
    """Every clean delivery in one transaction, from the batch's staging: a restatement replaces
    only the changed files."""
    for delivery in clean:
        results[delivery.key] = LoadResult(
            *delivery.key, changed=True, restated=bool(loaded[delivery.key])
        )
    with transaction(con):
        for schema in kinds:
            changed = [
                d.key for d in clean if loaded[d.key].get(schema.kind) != hashes[d.key][schema.kind]
            ]
            if not changed:
                continue
            stage = staging.table(schema.kind)
            ids = [
                (*key, _delivery_id(schema.kind, key, hashes[key][schema.kind])) for key in changed
            ]
            con.execute(
                "create or replace temp table delivery_ids "
                "(deal_id varchar, scope varchar, delivery_id varchar)"
            )
            insert_rows(con, "delivery_ids", ids)
            if schema.per_period:
                con.execute(
                    f"delete from {schema.table} where (deal_id, collection_period) in "
                    "(select (deal_id, scope) from delivery_ids)"
                )
            else:
                con.execute(
                    f"delete from {schema.table} "
                    "where deal_id in (select deal_id from delivery_ids)"
                )
            casts = ", ".join(f'cast(stage."{c.name}" as {c.type})' for c in schema.columns)
            scope = "stage.scope, " if schema.per_period else ""
            con.execute(
                f"insert into {schema.table} select stage.deal_id, {scope}ids.delivery_id, {casts} "
                f"from {stage} as stage inner join delivery_ids as ids using (deal_id, scope) "
                "order by stage.rowid"
            )
            counts = {
                (deal, scope_): count
                for deal, scope_, count in con.execute(
                    f"select deal_id, scope, count(*) from {stage} group by all"
                ).fetchall()
            }
            con.execute(
                "update raw.deliveries set status = 'superseded', superseded_at = ? "
                "where file_kind = ? and status = 'loaded' and (deal_id, scope) in "
                "(select (deal_id, scope) from delivery_ids)",
                [now, schema.kind],
            )
            con.execute(
                "delete from raw.deliveries where status = 'rejected' "
                "and delivery_id in (select delivery_id from delivery_ids)"
            )
            insert_rows(
                con,
                "raw.deliveries",
                [
                    (delivery_id, deal_id, schema.kind, scope_,
                     str(paths[(deal_id, scope_)][schema.kind]),
                     hashes[(deal_id, scope_)][schema.kind], counts.get((deal_id, scope_), 0),
                     "loaded", 0, None, now, None)
                    for deal_id, scope_, delivery_id in ids
                ],
            )  # fmt: skip
            for key in changed:
                results[key].rows[schema.kind] = counts.get(key, 0)
        _supersede_absent_tapes(con, kinds, clean, now)


def _supersede_absent_tapes(con, kinds, clean, now) -> None:
    """A Collection Period's delivery is its tapes as a whole: a tape it does not hold (an SEC
    EX-102 filing has no payment transactions) is no longer delivered for the period, so the rows
    an earlier delivery loaded for it go, and that delivery is superseded."""
    if not kinds[0].per_period:
        return
    delivered = {schema.kind for schema in kinds}
    keys = [delivery.key for delivery in clean]
    con.execute("create or replace temp table replaced_periods (deal_id varchar, scope varchar)")
    insert_rows(con, "replaced_periods", keys)
    for schema in TAPE_SCHEMAS:
        if schema.kind in delivered or not table_exists(con, *schema.table.split(".")):
            continue
        con.execute(
            f"delete from {schema.table} where (deal_id, collection_period) in "
            "(select (deal_id, scope) from replaced_periods)"
        )
        con.execute(
            "update raw.deliveries set status = 'superseded', superseded_at = ? "
            "where file_kind = ? and status = 'loaded' and (deal_id, scope) in "
            "(select (deal_id, scope) from replaced_periods)",
            [now, schema.kind],
        )


def _reject(con, delivery: Delivery, files, hashes, whole, shown, now) -> int:
    """Record a rejected delivery: each finding's row in raw.quarantine with the record (the row
    checks' findings straight from their temp table, however many), each file with findings in
    raw.deliveries. Returns the number of findings."""
    key = delivery.key
    total = 0
    with transaction(con):
        for schema, path in files:
            delivery_id = _delivery_id(schema.kind, key, hashes[schema.kind])
            con.execute("delete from raw.quarantine where delivery_id = ?", [delivery_id])
            con.execute(
                "delete from raw.deliveries where delivery_id = ? and status = 'rejected'",
                [delivery_id],
            )
            if not shown.get(schema.kind):
                continue
            con.execute(
                "create or replace temp table file_findings (row_number bigint, field varchar, "
                "reason varchar, value varchar)"
            )
            if whole.get(schema.kind):
                insert_rows(
                    con,
                    "file_findings",
                    [(f.row, f.field, f.reason, f.value) for f in whole[schema.kind]],
                )
            checks = findings_table(schema.kind)
            if con.execute(
                "select count(*) from duckdb_tables() where temporary and table_name = ?", [checks]
            ).fetchone()[0]:
                con.execute(
                    f"insert into file_findings select row_number, field, reason, value "
                    f"from {checks} where deal_id = ? and scope = ?",
                    list(key),
                )
            count = con.execute("select count(*) from file_findings").fetchone()[0]
            total += count
            con.execute(
                "insert into raw.quarantine select ?, ?, ?, ?, ?, finding.row_number, "
                "finding.field, finding.reason, finding.value, staged.record, ? "
                f"from file_findings as finding left join {numbered_stage(schema.kind)} as staged "
                "on staged.deal_id = ? and staged.scope = ? "
                "and staged.row_number = finding.row_number "
                "order by finding.row_number nulls first, finding.field",
                [delivery_id, delivery.deal_id, schema.kind, delivery.scope, str(path), now,
                 delivery.deal_id, delivery.scope],
            )  # fmt: skip
            con.execute(
                "insert into raw.deliveries values "
                "(?, ?, ?, ?, ?, ?, null, 'rejected', ?, ?, ?, null)",
                [delivery_id, delivery.deal_id, schema.kind, delivery.scope, str(path),
                 hashes[schema.kind], count, str(shown[schema.kind][0]), now],
            )  # fmt: skip
    return total


def reject_folder(con, deal_id: str, scope: str, folder: Path, finding: Finding) -> None:
    """Record a delivery folder that cannot be read as a delivery at all (several EX-102 pool
    variants and none named): one rejected row in raw.deliveries for its tape, identified by the
    SHA-256 of its files' SHA-256s, so the gate and the index say why the period is missing."""
    con.execute(AUDIT_DDL)
    files = sorted(path for path in folder.iterdir() if path.is_file())
    digest = hashlib.sha256("\n".join(sha256(path) for path in files).encode()).hexdigest()
    delivery_id = _delivery_id("loan_status", (deal_id, scope), digest)
    with transaction(con):
        con.execute("delete from raw.deliveries where delivery_id = ?", [delivery_id])
        con.execute(
            "insert into raw.deliveries values (?, ?, 'loan_status', ?, ?, ?, null, 'rejected', "
            "1, ?, ?, null)",
            [delivery_id, deal_id, scope, str(folder), digest, str(finding),
             dt.datetime.now(dt.UTC)],
        )  # fmt: skip


def _drop_stages(con, kinds) -> None:
    for schema in kinds:
        for staging in (TEXT, TYPED):
            con.execute(f"drop table if exists {staging.table(schema.kind)}")
        con.execute(f"drop table if exists {findings_table(schema.kind)}")
    con.execute("drop table if exists stage_periods")
