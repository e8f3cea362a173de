"""Checks a delivered file before anything is loaded; every problem names file, row and field.

A file is read into a temporary all-text table first, so a wrong type is a finding, not a crash.
"""

import csv
import datetime as dt
import gzip
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from dagster_project.ingestion import ex102
from dagster_project.ingestion.schemas import FileSchema
from dagster_project.warehouse import table_exists


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


def _file_findings(schema: FileSchema, path: Path) -> tuple[list[str] | None, list[Finding]]:
    """What can be said of a file before reading its rows: present, not empty, a header naming
    exactly the schema's columns. Returns (header, findings)."""
    if not path.exists():
        return None, [Finding(str(path), None, None, "file is missing from the delivery")]
    if path.stat().st_size == 0:
        return None, [Finding(str(path), None, None, "file is empty")]
    if path.suffix == ".parquet":
        try:
            names = [
                row[0]
                for row in duckdb.connect()
                .execute("describe select * from read_parquet(?)", [str(path)])
                .fetchall()
            ]
        except duckdb.Error as error:
            first_line = str(error).strip().splitlines()[0]
            return None, [Finding(str(path), None, None, f"file cannot be read: {first_line}")]
        return names, _column_findings(schema, path, names)
    header = _csv_header(path)
    if isinstance(header, Finding):
        return None, [header]
    return header, _column_findings(schema, path, header)


def _column_findings(schema: FileSchema, path: Path, names: list[str]) -> list[Finding]:
    return [
        Finding(str(path), None, column.name, "required column is missing")
        for column in schema.columns
        if column.in_every_file and column.name not in names
    ] + [
        Finding(str(path), None, name, "unexpected column (renamed or extra?)")
        for name in names
        if name not in schema.names
    ]


def _reader(suffix: str) -> str:
    """The table function reading the files $paths (one format, one header) as text, in the
    order given and each file in its order, with each row's file in `filename`."""
    if suffix == ".parquet":
        return "read_parquet($paths, filename = true)"
    # No sniffing: the header names the columns, every value is text, and a row with too few or
    # too many fields (a truncated file) is an error with its line number.
    return (
        "read_csv($paths, columns = $columns, header = false, skip = 1, delim = ',', "
        "quote = '\"', escape = '\"', auto_detect = false, strict_mode = true, "
        "null_padding = false, filename = true)"
    )


def stage_files(
    con: duckdb.DuckDBPyConnection, schema: FileSchema, files: dict[str, Path]
) -> dict[str, list[Finding]]:
    """Read every readable file of `files` (scope -> path) as text into one temp table
    (scope, columns...); return each scope's file-level findings.

    The files of one format and header are read by one query (one multi-file read is about twice
    as fast as a union of one read per file). Rows go in in file order, a scope's rows together,
    so a row's number in its file follows from its rowid (row_number below).
    A file that cannot be parsed (truncated, not UTF-8 past its header) fails the combined read;
    the files are then read one by one, so the finding names that file.
    """
    table = stage_table(schema.kind)
    con.execute(f"drop table if exists {table}")
    con.execute(
        f"create temp table {table} (scope varchar, "
        + ", ".join(f'"{name}" varchar' for name in schema.names)
        + ")"
    )
    findings: dict[str, list[Finding]] = {}
    readable: dict[str, tuple[Path, list[str]]] = {}
    with tempfile.TemporaryDirectory(prefix="caot_stage_") as converted:
        for scope, path in files.items():
            read = path
            if path.suffix == ".xml" and path.exists():
                read = Path(converted) / f"{scope}.csv"
                try:  # EX-102: streamed into the tape's columns, then read like a CSV
                    ex102.convert(path, read, schema.names)
                except ex102.Ex102Error as error:
                    findings[scope] = [
                        Finding(str(path), None, None, f"file cannot be read: {error}")
                    ]
                    continue
            header, found = _file_findings(schema, read)
            findings[scope] = [Finding(str(path), f.row, f.field, f.reason, f.value) for f in found]
            if not found:
                readable[scope] = (read, header)
        _read_into(con, table, schema, files, readable, findings)
    return findings


def row_number(row_id: str, scope: str, stage: str) -> str:
    """SQL for the number in its file (1 = the first row after the header) of the row of the
    stage table `stage` with rowid `row_id` and scope `scope` (stage_files inserts rows in file
    order, a scope's rows together)."""
    return f"{row_id} - (select min(rowid) from {stage} where scope = {scope}) + 1"


def _read_into(con, table, schema, files, readable, findings) -> None:
    def insert(scopes: list[str]) -> None:
        path, names = readable[scopes[0]]
        # a column a format may leave out reads as NULL
        wanted = ", ".join(
            f'"{name}"::varchar' if name in names else f'null::varchar as "{name}"'
            for name in schema.names
        )
        paths = [str(readable[scope][0]) for scope in scopes]
        params = {"paths": paths, "scopes": scopes}
        if path.suffix != ".parquet":
            params["columns"] = {name: "VARCHAR" for name in names}
        con.execute(
            f"insert into {table} select list_extract($scopes::varchar[], "
            f"list_position($paths::varchar[], filename)), {wanted} from {_reader(path.suffix)}",
            params,
        )

    # one read per format and header; a file given for two scopes is read once for each (its
    # rows would otherwise all take the first scope)
    groups: dict[tuple, list[str]] = {}
    for scope, (path, names) in readable.items():
        key = (path.suffix == ".parquet", tuple(names))
        while any(readable[other][0] == path for other in groups.get(key, [])):
            key += ("again",)
        groups.setdefault(key, []).append(scope)
    try:
        for scopes in groups.values():
            insert(scopes)
    except duckdb.Error:
        con.execute(f"delete from {table}")
        for scope in readable:
            try:
                insert([scope])
            except duckdb.Error as error:
                first_line = str(error).strip().splitlines()[0]
                findings[scope].append(
                    Finding(str(files[scope]), None, None, f"file cannot be read: {first_line}")
                )
    if not schema.allow_empty:
        counts = dict(con.execute(f"select scope, count(*) from {table} group by scope").fetchall())
        for scope in readable:
            if not findings[scope] and not counts.get(scope):
                findings[scope].append(
                    Finding(str(files[scope]), None, None, "file has a header but no rows")
                )


def row_checks(schema: FileSchema, with_periods: bool) -> tuple[str, list]:
    """One query returning (scope, row, field, reason, value) for every failing cell of the
    stage; period bounds come from the temp table stage_periods when `with_periods`."""
    table = stage_table(schema.kind)
    parts, params = [], []

    def add(sql: str, *values):
        parts.append(sql)
        params.extend(values)

    for column in schema.columns:
        name = f'"{column.name}"'
        label = column.name
        if column.required:
            # EX-102 leaves out what does not apply: NULL there, never 0 (ingestion/ex102.py)
            omitted = " and \"sourceFormat\" is distinct from 'ex102'" if column.omissible else ""
            add(
                f"select scope, rowid, '{label}', 'missing value', null from {table} "
                f"where {name} is null{omitted}"
            )
        add(
            f"select scope, rowid, '{label}', 'not a valid {column.type}', {name} from {table} "
            f"where {name} is not null and try_cast({name} as {column.type}) is null"
        )
        if column.nonnegative:
            add(
                f"select scope, rowid, '{label}', 'negative amount', {name} from {table} "
                f"where try_cast({name} as {column.type}) < 0"
            )
        if column.maximum is not None:
            add(
                f"select scope, rowid, '{label}', 'absurd amount (over {column.maximum})', {name} "
                f"from {table} where try_cast({name} as {column.type}) > ?::{column.type}",
                column.maximum,
            )
        if column.allowed:
            add(
                f"select scope, rowid, '{label}', 'value not in the accepted codes', {name} "
                f"from {table} where {name} is not null "
                f"and not list_contains(?::varchar[], {name})",
                list(column.allowed),
            )
    keys = ", ".join(f'"{k}"' for k in schema.key)
    add(
        f"select scope, rowid, '{'+'.join(schema.key)}', 'duplicate row', concat_ws('|', {keys}) "
        f"from (select *, rowid, count(*) over (partition by scope, {keys}) as _copies "
        f"from {table}) where _copies > 1"
    )
    if schema.id_column:
        add(
            f"select scope, rowid, '{schema.id_column}', "
            "'receivable not in the Receivable Schedule', "
            f'"{schema.id_column}" from {table} where "{schema.id_column}" not in '
            "(select receivable_id from raw.receivable_schedule)"
        )
    if schema.period_columns and with_periods:
        for name, bound in zip(schema.period_columns, ("period_start", "period_end"), strict=True):
            add(
                f"select stage.scope, stage.rowid, '{name}', "
                "'tape is for another Collection Period', "
                f'stage."{name}" from {table} as stage inner join stage_periods as period '
                f'using (scope) where try_cast(stage."{name}" as date) <> period.{bound}'
            )
    if schema.date_in_period and with_periods:
        name = schema.date_in_period
        add(
            f"select stage.scope, stage.rowid, '{name}', 'date outside the Collection Period', "
            f'stage."{name}" from {table} as stage inner join stage_periods as period '
            f'using (scope) where try_cast(stage."{name}" as date) '
            f"not between period.period_start and period.period_end"
        )
    return " union all ".join(parts), params


def _money(column: str, alias: str = "") -> str:
    prefix = f"{alias}." if alias else ""
    return f'try_cast({prefix}"{column}" as decimal(18, 2))'


def tape_consistency_checks(con) -> str:
    """The loan-level tapes of the batch against themselves and against their neighbours:

    - the ending balance follows from the beginning balance less principal collected, rebates
      and charge-off (zero once purchased);
    - each receivable begins the period at the balance it ended the previous one (the first
      Collection Period: its Principal Balance in the Receivable Schedule);
    - every receivable outstanding at the end of the previous period is on the tape.
    The previous period is taken from the batch if it is in it, else from what is loaded; one
    neither delivered nor loaded cannot be compared (the servicing criteria catch it later).
    """
    table = stage_table("loan_status")
    begin, end = (
        "reportingPeriodBeginningLoanBalanceAmount",
        "reportingPeriodActualEndBalanceAmount",
    )
    loaded = (
        f'union all select scope, "assetNumber", "{end}" from raw.loan_status '
        f"where scope not in (select scope from stage_periods)"
        if table_exists(con, "raw", "loan_status")
        else ""
    )
    prior = f'(select scope, "assetNumber", {_money(end)} as ending from {table} {loaded})'
    return f"""
        select scope, rowid, '{end}', 'ending balance does not follow from the beginning balance,
            principal, rebates and charge-off', "{end}" from {table}
        where {_money(end)} is distinct from case when "loanStatus" = 'purchased' then 0
            else {_money(begin)} - coalesce({_money("actualPrincipalCollectedAmount")}, 0)
            - coalesce({_money("rebateAmount")}, 0)
            - coalesce({_money("chargedoffPrincipalAmount")}, 0) end
            and {_money(begin)} is not null and {_money(end)} is not null
        union all
        select stage.scope, stage.rowid, '{begin}', 'beginning balance is not the Principal
            Balance in the Receivable Schedule (' || schedule.principal_balance || ')',
            stage."{begin}"
        from {table} as stage
        inner join stage_periods as period using (scope)
        inner join raw.receivable_schedule as schedule
            on schedule.receivable_id = stage."assetNumber"
        where period.is_first and {_money(begin, "stage")} <> schedule.principal_balance
        union all
        select stage.scope, stage.rowid, '{begin}', 'beginning balance is not the ending balance
            of ' || period.previous_scope || ' (' || prior.ending || ')', stage."{begin}"
        from {table} as stage
        inner join stage_periods as period using (scope)
        inner join {prior} as prior
            on prior.scope = period.previous_scope and prior."assetNumber" = stage."assetNumber"
        where not period.is_first and {_money(begin, "stage")} <> prior.ending
        union all
        select period.scope, null, 'assetNumber', 'receivable outstanding at the end of '
            || period.previous_scope || ' is missing from the tape', prior."assetNumber"
        from stage_periods as period
        inner join {prior} as prior on prior.scope = period.previous_scope
        where not period.is_first and prior.ending > 0 and not exists (
            select 1 from {table} as stage
            where stage.scope = period.scope and stage."assetNumber" = prior."assetNumber")
    """


def stage_periods(con, periods: dict[str, tuple[dt.date, dt.date]]) -> None:
    """The batch's Collection Periods: bounds, the period before each, whether it is the first."""
    cutoff = (
        con.execute(
            "select max(value)::date from raw.deal_terms where term = 'cutoff_date'"
        ).fetchone()[0]
        if table_exists(con, "raw", "deal_terms")
        else None
    )
    con.execute(
        "create or replace temp table stage_periods (scope varchar, period_start date, "
        "period_end date, previous_scope varchar, is_first boolean)"
    )
    con.executemany(
        "insert into stage_periods values (?, ?, ?, ?, ?)",
        [
            (
                scope,
                start,
                end,
                f"{start - dt.timedelta(days=1):%Y-%m}",
                cutoff is not None and start == cutoff + dt.timedelta(days=1),
            )
            for scope, (start, end) in periods.items()
        ],
    )


def check_rows(
    con,
    schema: FileSchema,
    files: dict[str, Path],
    periods: dict[str, tuple[dt.date, dt.date]] | None = None,
) -> dict[str, list[Finding]]:
    """Every failing cell of the staged files, per scope, naming file, row and field."""
    sql, params = row_checks(schema, with_periods=bool(periods))
    if schema.kind == "loan_status" and periods:
        sql = f"{sql} union all {tape_consistency_checks(con)}"
    findings: dict[str, list[Finding]] = {scope: [] for scope in files}
    number = row_number("found.row_id", "found.scope", stage_table(schema.kind))
    rows = con.execute(
        f"select scope, {number}, field, reason, value "
        f"from ({sql}) as found(scope, row_id, field, reason, value) order by 1, 2 nulls last, 3",
        params,
    ).fetchall()
    for scope, row, field, reason, value in rows:
        if scope in findings:
            reason = " ".join(reason.split())
            findings[scope].append(Finding(str(files[scope]), row, field, reason, value))
    return findings
