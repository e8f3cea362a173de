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


def _table_exists(con, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'raw' and table_name = ?",
            [table],
        ).fetchone()[0]
    )


def _loaded(con, scope: str) -> bool:
    return _table_exists(con, "loan_status") and bool(
        con.execute("select count(*) from raw.loan_status where scope = ?", [scope]).fetchone()[0]
    )


def _money(column: str, alias: str = "") -> str:
    prefix = f"{alias}." if alias else ""
    return f'try_cast({prefix}"{column}" as decimal(18, 2))'


def tape_consistency_checks(con, period_start: dt.date) -> tuple[str, list]:
    """The loan-level tape against itself and against what is loaded before it:

    - the ending balance follows from the beginning balance less principal collected, rebates
      and charge-off (zero once purchased);
    - each receivable begins the period at the balance it ended the previous one (the first
      period: its Principal Balance in the Receivable Schedule);
    - every receivable outstanding at the end of the previous period is on the tape.
    A previous period not loaded yet cannot be compared; the servicing criteria catch it later.
    """
    table = stage_table("loan_status")
    begin, end = (
        "reportingPeriodBeginningLoanBalanceAmount",
        "reportingPeriodActualEndBalanceAmount",
    )
    parts = [
        f"select _row, '{end}', 'ending balance does not follow from the beginning balance, "
        f'principal, rebates and charge-off\', "{end}" from {table} '
        f"where {_money(end)} is distinct from case when \"loanStatus\" = 'purchased' then 0 "
        f"else {_money(begin)} - {_money('actualPrincipalCollectedAmount')} "
        f"- {_money('rebateAmount')} - {_money('chargedoffPrincipalAmount')} end "
        f"and {_money(begin)} is not null and {_money(end)} is not null"
    ]
    params: list = []
    previous = f"{period_start - dt.timedelta(days=1):%Y-%m}"
    cutoff = (
        con.execute(
            "select max(value)::date from raw.deal_terms where term = 'cutoff_date'"
        ).fetchone()[0]
        if _table_exists(con, "deal_terms")
        else None
    )
    if cutoff is not None and period_start == cutoff + dt.timedelta(days=1):
        # the first Collection Period begins at the schedule's Principal Balances
        parts.append(
            f"select stage._row, '{begin}', 'beginning balance is not the Principal Balance in "
            f"the Receivable Schedule (' || schedule.principal_balance || ')', "
            f'stage."{begin}" from {table} as stage inner join raw.receivable_schedule as '
            f'schedule on schedule.receivable_id = stage."assetNumber" '
            f"where {_money(begin, 'stage')} <> schedule.principal_balance"
        )
    elif _loaded(con, previous):
        parts.append(
            f"select stage._row, '{begin}', 'beginning balance is not the ending balance of "
            f'{previous} (\' || prior."{end}" || \')\', stage."{begin}" from {table} as stage '
            f"inner join raw.loan_status as prior on prior.scope = ? "
            f'and prior."assetNumber" = stage."assetNumber" '
            f'where {_money(begin, "stage")} <> prior."{end}"'
        )
        parts.append(
            f"select null, 'assetNumber', 'receivable outstanding at the end of {previous} is "
            f'missing from the tape\', prior."assetNumber" from raw.loan_status as prior '
            f'where prior.scope = ? and prior."{end}" > 0 and prior."assetNumber" not in '
            f'(select "assetNumber" from {table})'
        )
        params += [previous, previous]
    return " union all ".join(parts), params


def check_rows(con, schema: FileSchema, path: Path, period_start=None, period_end=None):
    sql, params = row_checks(schema, period_start, period_end)
    if schema.kind == "loan_status" and period_start:
        extra_sql, extra_params = tape_consistency_checks(con, period_start)
        sql = f"select * from ({sql}) union all {extra_sql} order by 1 nulls last, 2"
        params = params + extra_params
    return [
        Finding(str(path), row, field, reason, value)
        for row, field, reason, value in con.execute(sql, params).fetchall()
    ]
