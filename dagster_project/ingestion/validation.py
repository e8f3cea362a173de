"""Checks a delivered file before anything is loaded; every problem names file, row and field.

A file is read into a temporary all-text table first, so a wrong type is a finding, not a crash.
"""

import csv
import datetime as dt
import gzip
from dataclasses import dataclass
from pathlib import Path

import duckdb

from dagster_project.ingestion.schemas import FileSchema


@dataclass(frozen=True)
class Finding:
    file: str
    row: int | None  # data row number (1 = first row after the header); None: whole file
    field: str | None
    reason: str
    value: str | None = None

    def __str__(self) -> str:
        where = self.file if self.row is None else f"{self.file}, row {self.row}"
        if self.field:
            where += f", field '{self.field}'"
        shown = "" if self.value is None else f" (value {self.value!r})"
        return f"{where}: {self.reason}{shown}"


def stage_table(kind: str) -> str:
    return f"stage_{kind}"


def _csv_header(path: Path) -> list[str] | Finding:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            header = next(csv.reader(handle), None)
    except UnicodeDecodeError as error:
        return Finding(
            str(path),
            None,
            None,
            f"file cannot be read: not UTF-8 ({error.reason} at byte {error.start})",
        )
    except (OSError, csv.Error) as error:
        return Finding(str(path), None, None, f"file cannot be read: {error}")
    if not header:
        return Finding(str(path), None, None, "file is empty")
    if len(set(header)) != len(header):
        return Finding(str(path), None, None, f"header repeats a column name: {header}")
    return header


def stage_file(con: duckdb.DuckDBPyConnection, schema: FileSchema, path: Path) -> list[Finding]:
    """Read `path` as text into a temp table with row numbers; return file-level findings."""
    table = stage_table(schema.kind)
    con.execute(f"drop table if exists {table}")
    if not path.exists():
        return [Finding(str(path), None, None, "file is missing from the delivery")]
    if path.stat().st_size == 0:
        return [Finding(str(path), None, None, "file is empty")]
    if path.suffix == ".parquet":
        reader, params = "select columns(*)::varchar from read_parquet(?)", [str(path)]
    else:
        header = _csv_header(path)
        if isinstance(header, Finding):
            return [header]
        # No sniffing: the header names the columns, every value is text, and a row with too
        # few or too many fields (a truncated file) is an error with its line number.
        reader = (
            "select * from read_csv(?, columns = ?, header = false, skip = 1, "
            "delim = ',', quote = '\"', escape = '\"', auto_detect = false, "
            "strict_mode = true, null_padding = false)"
        )
        params = [str(path), {name: "VARCHAR" for name in header}]
    try:
        con.execute(
            f"create temp table {table} as select row_number() over () as _row, * from ({reader})",
            params,
        )
    except duckdb.Error as error:
        first_line = str(error).strip().splitlines()[0]
        return [Finding(str(path), None, None, f"file cannot be read: {first_line}")]
    columns = [row[0] for row in con.execute(f"describe {table}").fetchall()][1:]
    findings = []
    missing = [c for c in schema.names if c not in columns]
    extra = [c for c in columns if c not in schema.names]
    for name in missing:
        findings.append(Finding(str(path), None, name, "required column is missing"))
    for name in extra:
        findings.append(Finding(str(path), None, name, "unexpected column (renamed or extra?)"))
    if (
        not findings
        and not schema.allow_empty
        and con.execute(f"select count(*) from {table}").fetchone()[0] == 0
    ):
        findings.append(Finding(str(path), None, None, "file has a header but no rows"))
    return findings


def row_checks(
    schema: FileSchema, period_start: dt.date | None, period_end: dt.date | None
) -> tuple[str, list]:
    """One query returning (row, field, reason, value) for every failing cell of the stage."""
    table = stage_table(schema.kind)
    parts, params = [], []

    def add(sql: str, *values):
        parts.append(sql)
        params.extend(values)

    for column in schema.columns:
        name = f'"{column.name}"'
        label = column.name
        if column.required:
            add(f"select _row, '{label}', 'missing value', null from {table} where {name} is null")
        add(
            f"select _row, '{label}', 'not a valid {column.type}', {name} from {table} "
            f"where {name} is not null and try_cast({name} as {column.type}) is null"
        )
        if column.nonnegative:
            add(
                f"select _row, '{label}', 'negative amount', {name} from {table} "
                f"where try_cast({name} as {column.type}) < 0"
            )
        if column.maximum is not None:
            add(
                f"select _row, '{label}', 'absurd amount (over {column.maximum})', {name} "
                f"from {table} where try_cast({name} as {column.type}) > ?::{column.type}",
                column.maximum,
            )
        if column.allowed:
            add(
                f"select _row, '{label}', 'value not in the accepted codes', {name} from {table} "
                f"where {name} is not null and not list_contains(?::varchar[], {name})",
                list(column.allowed),
            )
    keys = ", ".join(f'"{k}"' for k in schema.key)
    add(
        f"select _row, '{'+'.join(schema.key)}', 'duplicate row', concat_ws('|', {keys}) from "
        f"(select *, count(*) over (partition by {keys}) as _copies from {table}) "
        f"where _copies > 1"
    )
    if schema.id_column:
        add(
            f"select _row, '{schema.id_column}', 'receivable not in the Receivable Schedule', "
            f'"{schema.id_column}" from {table} where "{schema.id_column}" not in '
            f"(select receivable_id from raw.receivable_schedule)"
        )
    if schema.period_columns and period_start:
        begin, end = schema.period_columns
        add(
            f"select _row, '{begin}', 'tape is for another Collection Period', \"{begin}\" "
            f'from {table} where try_cast("{begin}" as date) <> ?',
            period_start,
        )
        add(
            f"select _row, '{end}', 'tape is for another Collection Period', \"{end}\" "
            f'from {table} where try_cast("{end}" as date) <> ?',
            period_end,
        )
    if schema.date_in_period and period_start:
        name = schema.date_in_period
        add(
            f"select _row, '{name}', 'date outside the Collection Period', \"{name}\" "
            f'from {table} where try_cast("{name}" as date) not between ? and ?',
            period_start,
            period_end,
        )
    sql = " union all ".join(parts)
    return f"select * from ({sql}) order by 1, 2", params


def check_rows(con, schema: FileSchema, path: Path, period_start=None, period_end=None):
    sql, params = row_checks(schema, period_start, period_end)
    return [
        Finding(str(path), row, field, reason, value)
        for row, field, reason, value in con.execute(sql, params).fetchall()
    ]
