"""Transactional, idempotent loading of validated files into the `raw` schema.

- The same file (same SHA-256) loaded twice changes nothing.
- A file with any finding is rejected whole: its failing rows go to raw.quarantine with the
  reason, and the rows already loaded for that scope (schedule or Collection Period) stay as
  they were.
- A different file for a scope already loaded is a restatement: it replaces the scope's rows in
  one transaction and the earlier delivery stays in raw.deliveries, marked superseded.
"""

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from dagster_project.checksums import sha256
from dagster_project.ingestion.schemas import FileSchema
from dagster_project.ingestion.validation import (
    Finding,
    check_rows,
    row_number,
    stage_files,
    stage_periods,
    stage_table,
)
from dagster_project.warehouse import transaction

AUDIT_DDL = """
create schema if not exists raw;
create table if not exists raw.deliveries (
    delivery_id varchar, file_kind varchar, scope varchar, file_path varchar, sha256 varchar,
    row_count bigint, status varchar, finding_count bigint, first_finding varchar,
    loaded_at timestamptz, superseded_at timestamptz
);
create table if not exists raw.quarantine (
    delivery_id varchar, file_kind varchar, scope varchar, file_path varchar,
    row_number bigint, field varchar, reason varchar, value varchar, record json,
    quarantined_at timestamptz
);
"""


class IngestionError(Exception):
    """A delivery was rejected; `findings` name the file, row and field of each problem."""

    def __init__(self, scope: str, findings: list[Finding]):
        self.scope, self.findings = scope, findings
        shown = "\n  ".join(str(f) for f in findings[:12])
        more = f"\n  ... and {len(findings) - 12} more" if len(findings) > 12 else ""
        super().__init__(
            f"delivery for {scope} rejected ({len(findings)} findings; rows "
            f"quarantined in raw.quarantine, nothing loaded):\n  {shown}{more}"
        )


@dataclass
class LoadResult:
    scope: str
    changed: bool
    rows: dict[str, int] = field(default_factory=dict)
    restated: bool = False


def ensure_table(con, schema: FileSchema) -> None:
    con.execute(AUDIT_DDL)
    columns = ", ".join(f'"{c.name}" {c.type}' for c in schema.columns)
    con.execute(
        f"create table if not exists {schema.table} (scope varchar, delivery_id varchar, {columns})"
    )
    for column in schema.columns:  # a warehouse built before a column was added gets it
        con.execute(
            f'alter table {schema.table} add column if not exists "{column.name}" {column.type}'
        )


def current_hashes(con, scope: str) -> dict[str, str]:
    rows = con.execute(
        "select file_kind, sha256 from raw.deliveries where scope = ? and status = 'loaded'",
        [scope],
    ).fetchall()
    return dict(rows)


@dataclass(frozen=True)
class Delivery:
    """One scope's files: a Collection Period's tapes (with its bounds) or the schedule."""

    scope: str
    files: list[tuple[FileSchema, Path]]
    period_start: dt.date | None = None
    period_end: dt.date | None = None


def load_files(
    con,
    scope: str,
    files: list[tuple[FileSchema, Path]],
    period_start: dt.date | None = None,
    period_end: dt.date | None = None,
) -> LoadResult:
    """Validate and load `files` as one unit for `scope`; raise IngestionError if rejected."""
    (result,) = load_deliveries(con, [Delivery(scope, files, period_start, period_end)])
    if isinstance(result, IngestionError):
        raise result
    return result


def load_deliveries(con, deliveries: list[Delivery]) -> list[LoadResult | IngestionError]:
    """Validate and load several scopes in one pass (one read per file kind, one check query,
    one transaction for every clean scope); each scope is still accepted or rejected whole, and
    a rejected one leaves what was loaded for it before untouched. Results in the given order."""
    kinds = [schema for schema, _ in deliveries[0].files] if deliveries else []
    for schema in kinds:
        ensure_table(con, schema)
    results: dict[str, LoadResult | IngestionError] = {}
    hashes, loaded = {}, {}
    for delivery in deliveries:
        hashes[delivery.scope] = {
            schema.kind: sha256(path) if path.exists() else "" for schema, path in delivery.files
        }
        loaded[delivery.scope] = current_hashes(con, delivery.scope)
        if all(loaded[delivery.scope].get(k) == h for k, h in hashes[delivery.scope].items()):
            results[delivery.scope] = LoadResult(scope=delivery.scope, changed=False)
    pending = [d for d in deliveries if d.scope not in results]
    if pending:
        _validate_and_load(con, kinds, pending, hashes, loaded, results)
    return [results[d.scope] for d in deliveries]


def _validate_and_load(con, kinds, pending, hashes, loaded, results) -> None:
    periods = {
        d.scope: (d.period_start, d.period_end) for d in pending if d.period_start is not None
    }
    if periods:
        stage_periods(con, periods)
    findings: dict[str, dict[str, list[Finding]]] = {d.scope: {} for d in pending}
    paths = {d.scope: dict((schema.kind, path) for schema, path in d.files) for d in pending}
    try:
        for schema in kinds:
            files = {d.scope: paths[d.scope][schema.kind] for d in pending}
            file_level = stage_files(con, schema, files)
            readable = {scope: path for scope, path in files.items() if not file_level[scope]}
            rows = check_rows(con, schema, readable, periods) if readable else {}
            for scope in files:
                findings[scope][schema.kind] = file_level[scope] + rows.get(scope, [])
        now = dt.datetime.now(dt.UTC)
        clean = [d for d in pending if not any(findings[d.scope].values())]
        for delivery in pending:
            if delivery in clean:
                continue
            files = [(schema, paths[delivery.scope][schema.kind]) for schema in kinds]
            _reject(con, delivery.scope, files, hashes[delivery.scope],
                    findings[delivery.scope], now)  # fmt: skip
            results[delivery.scope] = IngestionError(
                delivery.scope, [f for group in findings[delivery.scope].values() for f in group]
            )
        if clean:
            _load(con, kinds, clean, paths, hashes, loaded, now, results)
    finally:
        _drop_stages(con, kinds)


def _load(con, kinds, clean, paths, hashes, loaded, now, results) -> None:
    """Every clean scope in one transaction: a restatement replaces only the changed files."""
    for delivery in clean:
        results[delivery.scope] = LoadResult(
            scope=delivery.scope, changed=True, restated=bool(loaded[delivery.scope])
        )
    with transaction(con):
        for schema in kinds:
            changed = [
                d.scope
                for d in clean
                if loaded[d.scope].get(schema.kind) != hashes[d.scope][schema.kind]
            ]
            if not changed:
                continue
            stage = stage_table(schema.kind)
            ids = [
                (scope, f"{schema.kind}:{scope}:{hashes[scope][schema.kind][:16]}")
                for scope in changed
            ]
            con.execute(
                "create or replace temp table _delivery_ids (scope varchar, delivery_id varchar)"
            )
            con.executemany("insert into _delivery_ids values (?, ?)", ids)
            con.execute(f"delete from {schema.table} where list_contains(?, scope)", [changed])
            casts = ", ".join(f'cast("{c.name}" as {c.type}) as "{c.name}"' for c in schema.columns)
            con.execute(
                f"insert into {schema.table} select stage.scope, ids.delivery_id, {casts} "
                f"from {stage} as stage inner join _delivery_ids as ids using (scope) "
                f"order by stage.rowid"
            )
            counts = dict(
                con.execute(
                    f"select scope, count(*) from {stage} where list_contains(?, scope) "
                    f"group by scope",
                    [changed],
                ).fetchall()
            )
            con.execute(
                "update raw.deliveries set status = 'superseded', superseded_at = ? "
                "where list_contains(?, scope) and file_kind = ? and status = 'loaded'",
                [now, changed, schema.kind],
            )
            con.execute(
                "delete from raw.deliveries where status = 'rejected' "
                "and delivery_id in (select delivery_id from _delivery_ids)"
            )
            con.executemany(
                "insert into raw.deliveries values (?, ?, ?, ?, ?, ?, 'loaded', 0, null, ?, null)",
                [
                    (delivery_id, schema.kind, scope, str(paths[scope][schema.kind]),
                     hashes[scope][schema.kind], counts.get(scope, 0), now)
                    for scope, delivery_id in ids
                ],
            )  # fmt: skip
            for scope in changed:
                results[scope].rows[schema.kind] = counts.get(scope, 0)


def _reject(con, scope, files, hashes, findings, now) -> None:
    with transaction(con):
        for schema, path in files:
            delivery_id = f"{schema.kind}:{scope}:{hashes[schema.kind][:16]}"
            found = findings.get(schema.kind, [])
            con.execute("delete from raw.quarantine where delivery_id = ?", [delivery_id])
            con.execute(
                "delete from raw.deliveries where delivery_id = ? and status = 'rejected'",
                [delivery_id],
            )
            if not found:
                continue
            rows = [(f.row, f.field, f.reason, f.value) for f in found]
            stage = stage_table(schema.kind)
            con.execute(
                "create or replace temp table _findings (row_number bigint, field varchar, "
                "reason varchar, value varchar)"
            )
            con.executemany("insert into _findings values (?, ?, ?, ?)", rows)
            con.execute(
                f"insert into raw.quarantine select ?, ?, ?, ?, f.row_number, f.field, "
                f"f.reason, f.value, (select to_json(s) from {stage} s where s.scope = ? "
                f"and {row_number('s.rowid', 's.scope', stage)} = f.row_number), ? "
                "from _findings f",
                [delivery_id, schema.kind, scope, str(path), scope, now],
            )
            con.execute(
                "insert into raw.deliveries values (?, ?, ?, ?, ?, null, 'rejected', ?, ?, "
                "?, null)",
                [delivery_id, schema.kind, scope, str(path), hashes[schema.kind], len(found),
                 str(found[0]), now],
            )  # fmt: skip


def _drop_stages(con, kinds) -> None:
    for schema in kinds:
        con.execute(f"drop table if exists {stage_table(schema.kind)}")
    con.execute("drop table if exists stage_periods")
