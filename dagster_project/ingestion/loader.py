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

from dagster_project.generator.writers import sha256
from dagster_project.ingestion.schemas import FileSchema
from dagster_project.ingestion.validation import Finding, check_rows, stage_file, stage_table
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


def current_hashes(con, scope: str) -> dict[str, str]:
    rows = con.execute(
        "select file_kind, sha256 from raw.deliveries where scope = ? and status = 'loaded'",
        [scope],
    ).fetchall()
    return dict(rows)


def load_files(
    con,
    scope: str,
    files: list[tuple[FileSchema, Path]],
    period_start: dt.date | None = None,
    period_end: dt.date | None = None,
) -> LoadResult:
    """Validate and load `files` as one unit for `scope` (a Collection Period or 'schedule')."""
    for schema, _ in files:
        ensure_table(con, schema)
    hashes = {schema.kind: sha256(path) if path.exists() else "" for schema, path in files}
    loaded = current_hashes(con, scope)
    if all(loaded.get(kind) == digest for kind, digest in hashes.items()):
        return LoadResult(scope=scope, changed=False)

    findings: dict[str, list[Finding]] = {}
    for schema, path in files:
        found = stage_file(con, schema, path)
        if not found:
            found = check_rows(con, schema, path, period_start, period_end)
        findings[schema.kind] = found
    now = dt.datetime.now(dt.UTC)
    if any(findings.values()):
        _reject(con, scope, files, hashes, findings, now)
        raise IngestionError(scope, [f for group in findings.values() for f in group])

    result = LoadResult(scope=scope, changed=True, restated=bool(loaded))
    try:
        with transaction(con):
            for schema, path in files:
                if loaded.get(schema.kind) == hashes[schema.kind]:
                    continue  # a restatement replaces only the files whose bytes changed
                delivery_id = f"{schema.kind}:{scope}:{hashes[schema.kind][:16]}"
                con.execute(f"delete from {schema.table} where scope = ?", [scope])
                casts = ", ".join(
                    f'cast("{c.name}" as {c.type}) as "{c.name}"' for c in schema.columns
                )
                con.execute(
                    f"insert into {schema.table} select ?, ?, {casts} "
                    f"from {stage_table(schema.kind)} order by _row",
                    [scope, delivery_id],
                )
                rows = con.execute(f"select count(*) from {stage_table(schema.kind)}").fetchone()[0]
                con.execute(
                    "update raw.deliveries set status = 'superseded', superseded_at = ? "
                    "where scope = ? and file_kind = ? and status = 'loaded'",
                    [now, scope, schema.kind],
                )
                con.execute(
                    "delete from raw.deliveries where delivery_id = ? and status = 'rejected'",
                    [delivery_id],
                )
                con.execute(
                    "insert into raw.deliveries "
                    "values (?, ?, ?, ?, ?, ?, 'loaded', 0, null, ?, null)",
                    [delivery_id, schema.kind, scope, str(path), hashes[schema.kind], rows, now],
                )
                result.rows[schema.kind] = rows
    finally:
        _drop_stages(con, files)
    return result


def _reject(con, scope, files, hashes, findings, now) -> None:
    try:
        with transaction(con):
            for schema, path in files:
                delivery_id = f"{schema.kind}:{scope}:{hashes[schema.kind][:16]}"
                found = findings[schema.kind]
                con.execute("delete from raw.quarantine where delivery_id = ?", [delivery_id])
                con.execute(
                    "delete from raw.deliveries where delivery_id = ? and status = 'rejected'",
                    [delivery_id],
                )
                if not found:
                    continue
                staged = con.execute(
                    "select count(*) from information_schema.tables where table_name = ?",
                    [stage_table(schema.kind)],
                ).fetchone()[0]
                rows = [(f.row, f.field, f.reason, f.value) for f in found]
                con.execute(
                    "create or replace temp table _findings (row_number bigint, field varchar, "
                    "reason varchar, value varchar)"
                )
                con.executemany("insert into _findings values (?, ?, ?, ?)", rows)
                record = (
                    f"(select to_json(s) from {stage_table(schema.kind)} s "
                    f"where s._row = f.row_number)"
                    if staged
                    else "null"
                )
                con.execute(
                    f"insert into raw.quarantine select ?, ?, ?, ?, f.row_number, f.field, "
                    f"f.reason, f.value, {record}, ? from _findings f",
                    [delivery_id, schema.kind, scope, str(path), now],
                )
                con.execute(
                    "insert into raw.deliveries values (?, ?, ?, ?, ?, null, 'rejected', ?, ?, "
                    "?, null)",
                    [
                        delivery_id,
                        schema.kind,
                        scope,
                        str(path),
                        hashes[schema.kind],
                        len(found),
                        str(found[0]),
                        now,
                    ],
                )
    finally:
        _drop_stages(con, files)


def _drop_stages(con, files) -> None:
    for schema, _ in files:
        con.execute(f"drop table if exists {stage_table(schema.kind)}")
