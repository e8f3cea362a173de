"""Checks a delivered file before anything is loaded; every problem names file, row and field.

Every check is one set-based query over a staged batch (the files of one kind of several
deliveries). A batch is staged twice at most:

- typed first (TYPED): each value read with its type, money and whole numbers with ten
  decimals. A value of the wrong type fails the read. This is the screen a clean batch passes,
  and the rows it loads.
- as delivered (TEXT), when the typed read fails or the checks find anything: every value as
  text, so a wrong type is a finding, not a crash, and each finding and quarantined record shows
  the value as delivered.

Files are keyed by their trust and scope: (deal_id, collection period) for the monthly tapes,
(deal_id, file kind) for the files delivered once.
"""

import csv
import datetime as dt
import gzip
import re
import zlib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import duckdb

from dagster_project.ingestion import ex102
from dagster_project.ingestion.schemas import MAX_AMOUNT, MONEY, RECEIVABLE_SCHEDULE, FileSchema
from dagster_project.warehouse import insert_rows, table_exists

Key = tuple[str, str]  # (deal_id, scope)


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


# A cast to money, an integer or any decimal rounds: 5435.789 would become 5435.79, 1.5 days 2
# and an APR of 0.0606007 0.060601. So the checks read those values with ten decimals first
# (fraction_finding names the finding). In the typed staging they are stored so, in 64 bits
# (DuckDB's fast decimals): values of 100 million or more fail the typed read and their file is
# checked as text (the servicer's tangible net worth, for one).
TYPED_EXACT = "decimal(18, 10)"
EXACT = "decimal(38, 10)"  # text read with ten decimals, for the checks of fraction_finding
DECIMAL = re.compile(r"decimal\((\d+), ?(\d+)\)")


def fraction_finding(column_type: str) -> str | None:
    """The finding for a value its type would round; None for a type that does not round."""
    if column_type == MONEY:
        return "amount has fractions of a cent (money has two decimals)"
    if column_type == "integer":
        return "not a whole number"
    scale = DECIMAL.fullmatch(column_type)
    return f"more than {scale.group(2)} decimals (never rounded)" if scale else None


def _narrower_than_typed_exact(column_type: str) -> bool:
    """Whether the type holds fewer whole digits than TYPED_EXACT (an APR's two): a value read
    with ten decimals may not fit it."""
    digits = DECIMAL.fullmatch(column_type)
    return digits is not None and int(digits.group(1)) - int(digits.group(2)) < 8


# Dates and booleans are read in one form each: ISO 8601 (2016-03-21; midnight after it, as a
# Parquet timestamp column writes a date, 2016-03-21 00:00:00) and xs:boolean (true, false, 1, 0;
# any case). DuckDB's cast takes more, as another value or a guess ('epoch' and 'infinity' as
# dates, a time of day and zone after the day; 'y', 'no' and 't' as booleans): a finding instead.
ISO_DATES = ["%Y-%m-%d", "%Y-%m-%d 00:00:00", "%Y-%m-%d 00:00:00+00"]
FORMS = {"date": " (YYYY-MM-DD)", "boolean": " (true, false, 1 or 0)"}  # said with a finding


def _parsed(text: str, column_type: str, strict: bool) -> str:
    """SQL for delivered text (`text`, SQL) as `column_type`: strict, an error for text of another
    type or form (the typed read, which then fails); else NULL for it (the checks of the text)."""
    if column_type == "date":  # strptime reads 'epoch' and 'infinity' too: a digit first
        other = f"else error('not a date: ' || {text}) " if strict else ""
        return (
            f"case when {text} is null then null when left({text}, 1) between '0' and '9' "
            f"then {'' if strict else 'try_'}strptime({text}, {ISO_DATES})::date {other}end"
        )
    if column_type == "boolean":
        other = f"else error('not a boolean: ' || {text}) " if strict else ""
        return (
            f"case when {text} is null then null when lower({text}) in ('true', '1') then true "
            f"when lower({text}) in ('false', '0') then false {other}end"
        )
    return f"{'cast' if strict else 'try_cast'}({text} as {column_type})"


@dataclass(frozen=True)
class Staging:
    """How a batch is staged: as delivered text (every value `varchar`, read through try_cast),
    or typed. The same checks run on both; on typed values they find what they find on the text
    (the value of a cast is the value of the same try_cast) or more (a duplicate compares typed
    values; a value with a fraction of a cent or of a whole number may round differently, and is a
    finding anyway), never less, so a batch that passes them typed passes them as text."""

    typed: bool

    def table(self, kind: str) -> str:
        return f"typed_{kind}" if self.typed else f"stage_{kind}"

    def stored_type(self, column_type: str) -> str:
        if not self.typed:
            return "varchar"
        return TYPED_EXACT if fraction_finding(column_type) else column_type

    def read(self, text: str, column_type: str) -> str:
        """SQL storing delivered text in the staging (the typed read: an error for text of
        another type or form)."""
        stored = self.stored_type(column_type)
        if not self.typed:
            return f"cast({text} as {stored})"
        if _narrower_than_typed_exact(column_type):  # 100 is no APR: the read fails, as text
            return (
                f"case when {text} is not null and try_cast({text} as {column_type}) is null "
                f"then error('not a {column_type}: ' || {text}) else cast({text} as {stored}) end"
            )
        return _parsed(text, stored, strict=True)

    def value(self, name: str, column_type: str, alias: str = "") -> str:
        """SQL for a column's value in its warehouse type (NULL for text of another type)."""
        column = f'{alias}."{name}"' if alias else f'"{name}"'
        return (
            f"cast({column} as {column_type})"
            if self.typed
            else _parsed(column, column_type, False)
        )

    def exact(self, name: str) -> str:
        """SQL for a value with ten decimals (the checks of fraction_finding)."""
        return f'"{name}"' if self.typed else f'try_cast("{name}" as {EXACT})'


TEXT, TYPED = Staging(typed=False), Staging(typed=True)


def _csv_header(path: Path) -> list[str] | Finding:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        # utf-8-sig: a UTF-8 byte-order mark before the header is accepted (and not a name)
        with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader(handle), None)
    except UnicodeDecodeError as error:
        return Finding(
            str(path),
            None,
            None,
            f"file cannot be read: not UTF-8 ({error.reason} at byte {error.start})",
        )
    except (OSError, csv.Error, EOFError, zlib.error) as error:  # zlib: a corrupt .gz
        return Finding(str(path), None, None, f"file cannot be read: {error}")
    if not header:
        return Finding(str(path), None, None, "file is empty")
    padded = [name for name in header if name != name.strip()]
    if padded:
        return Finding(
            str(path),
            None,
            None,
            "column names have surrounding spaces (is the separator ', ' instead of ','?): "
            + ", ".join(repr(name) for name in padded[:5]),
        )
    if len(set(header)) != len(header):
        return Finding(str(path), None, None, f"header repeats a column name: {header}")
    return header


def _file_findings(schema: FileSchema, path: Path) -> tuple[list[str] | None, list[Finding]]:
    """What can be said of a file before reading its rows: present, not empty, a header naming
    exactly the schema's columns. Returns (header, findings)."""
    if not path.exists():
        return None, [Finding(str(path), None, None, "file is missing from the delivery")]
    if not path.is_file():
        return None, [Finding(str(path), None, None, "not a file (a folder of that name?)")]
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
    if path.suffix == ".csv" and _cut_in_last_value(path, len(header)):
        return None, [Finding(str(path), None, None, "file does not end with a line break after "
                              "its last row: cut off in the row's last value?")]  # fmt: skip
    return header, _column_findings(schema, path, header)


def _cut_in_last_value(path: Path, fields: int) -> bool:
    """Whether the file ends without a line break in a row of every field: cut off inside its
    last value, 79860.1 for 79860.12, it would read as an amount (a row cut off before its last
    field is the read's error, naming row and field; a gzip file cut off fails its own check)."""
    with path.open("rb") as handle:
        handle.seek(max(handle.seek(0, 2) - 65536, 0))
        tail = handle.read()
    if tail.endswith((b"\n", b"\r")):
        return False
    last = tail.splitlines()[-1].decode("utf-8", errors="replace")
    return len(next(csv.reader([last]), [])) >= fields


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


CSV_ERROR = re.compile(
    r"CSV Error on Line: (\d+).*?Expected Number of Columns: (\d+) Found: (\d+)", re.S
)


def _read_error(path: Path, names: list[str], error: duckdb.Error) -> Finding:
    """A file DuckDB could not read, said as the data row and field where it broke."""
    text = str(error)
    found = CSV_ERROR.search(text)
    if found:
        line, expected, got = (int(x) for x in found.groups())
        field = names[got] if got < len(names) else None
        reason = (
            f"row has {got} of {expected} fields (file cut off or a separator missing)"
            if got < expected
            else f"row has {got} fields, the header {expected} (an unquoted separator?)"
        )
        return Finding(str(path), line - 1, field, reason)
    first_line = text.strip().splitlines()[0]
    return Finding(str(path), None, None, f"file cannot be read: {first_line}")


@dataclass
class PreparedFiles:
    """A batch's files of one kind, ready to read: each readable file (an EX-102 filing converted
    to the tape's columns as CSV) with its header, and each key's findings about its file as a
    whole (missing, empty, a header naming other columns)."""

    files: dict[Key, Path]  # as delivered
    readable: dict[Key, tuple[Path, list[str]]]
    findings: dict[Key, list[Finding]]


def prepare_files(schema: FileSchema, files: dict[Key, Path], workdir: Path) -> PreparedFiles:
    """`files` ((deal_id, scope) -> path) checked as whole files; EX-102 filings are converted into
    `workdir`, which must outlive the staging."""
    findings: dict[Key, list[Finding]] = {}
    readable: dict[Key, tuple[Path, list[str]]] = {}
    for number, (key, path) in enumerate(files.items()):
        read = path
        if path.suffix == ".xml" and path.exists():
            read = workdir / f"{schema.kind}_{number}.csv"
            try:  # EX-102: streamed into the tape's columns, then read like a CSV
                ex102.convert(path, read, schema)
            except ex102.Ex102Error as error:
                findings[key] = [Finding(str(path), None, None, f"file cannot be read: {error}")]
                continue
        header, found = _file_findings(schema, read)
        findings[key] = [Finding(str(path), f.row, f.field, f.reason, f.value) for f in found]
        if not found:
            readable[key] = (read, header)
    return PreparedFiles(files, readable, findings)


def _create_stage(con, schema: FileSchema, staging: Staging) -> str:
    table = staging.table(schema.kind)
    con.execute(f"drop table if exists {table}")
    con.execute(
        f"create temp table {table} (deal_id varchar, scope varchar, "
        + ", ".join(f'"{c.name}" {staging.stored_type(c.type)}' for c in schema.columns)
        + ")"
    )
    return table


def stage_files(
    con: duckdb.DuckDBPyConnection, schema: FileSchema, prepared: PreparedFiles
) -> dict[Key, list[Finding]]:
    """Read every readable file of the batch as text into one temp table (deal_id, scope,
    columns...); return each key's file-level findings.

    The files of one format and header are read by one query (one multi-file read is about twice
    as fast as a union of one read per file). Rows go in in file order, a key's rows together,
    so a row's number in its file follows from its rowid (numbered_stage below).
    A file that cannot be parsed (truncated, not UTF-8 past its header) fails the combined read;
    the files are then read one by one, so the finding names that file, row and field.
    """
    table = _create_stage(con, schema, TEXT)
    findings = {key: list(found) for key, found in prepared.findings.items()}
    readable = prepared.readable
    try:
        for keys in _read_groups(readable):
            _insert(con, table, schema, TEXT, readable, keys)
    except duckdb.Error:
        con.execute(f"delete from {table}")
        for key in readable:
            try:
                _insert(con, table, schema, TEXT, readable, [key])
            except duckdb.Error as error:
                path, names = readable[key]
                found = _read_error(path, names, error)
                findings[key].append(
                    Finding(str(prepared.files[key]), found.row, found.field, found.reason)
                )
    for key in _without_rows(con, table, schema, readable):
        if not findings[key]:
            findings[key].append(
                Finding(str(prepared.files[key]), None, None, "file has a header but no rows")
            )
    return findings


def stage_typed(
    con: duckdb.DuckDBPyConnection, schema: FileSchema, prepared: PreparedFiles
) -> bool:
    """Read the batch typed into one temp table, as stage_files reads it as text. False when
    that finds anything: a file-level finding, a value that is not of its column's type (or
    money or a whole number of 100 million or more), a file with no rows where rows are
    required."""
    table = _create_stage(con, schema, TYPED)
    if any(prepared.findings.values()):
        return False
    try:
        for keys in _read_groups(prepared.readable):
            _insert(con, table, schema, TYPED, prepared.readable, keys)
    except duckdb.Error:
        return False
    return not _without_rows(con, table, schema, prepared.readable)


def numbered_stage(kind: str) -> str:
    """SQL for the rows of the stage of `kind` as (deal_id, scope, row_number, record): each
    row's number in its file (1 = the first row after the header; stage_files inserts a key's
    rows together, in file order) and the row as JSON."""
    stage = TEXT.table(kind)  # the records raw.quarantine keeps
    return (
        "(select staged.deal_id, staged.scope, staged.rowid - min(staged.rowid) over "
        "(partition by staged.deal_id, staged.scope) + 1 as row_number, to_json(staged) as record "
        f"from {stage} as staged)"
    )


def _read_groups(readable: dict[Key, tuple[Path, list[str]]]) -> list[list[Key]]:
    """The keys read by one query each: one read per format and header; a file given for two keys
    is read once for each (its rows would otherwise all take the first key)."""
    groups: dict[tuple, list[Key]] = {}
    for key, (path, names) in readable.items():
        group = (path.suffix == ".parquet", tuple(names))
        while any(readable[other][0] == path for other in groups.get(group, [])):
            group += ("again",)
        groups.setdefault(group, []).append(key)
    return list(groups.values())


def _as_text(column: str, parquet: bool) -> str:
    """A delivered value as text; an empty text is no value, in Parquet as in CSV (whose reader
    makes it NULL)."""
    value = f'"{column}"::varchar'
    return f"nullif({value}, '')" if parquet else value


def _insert(con, table, schema: FileSchema, staging: Staging, readable, keys: list[Key]) -> None:
    """The files of `keys` (one format and header) into the stage, each value cast to the
    staging's type (an error for a value not of that type)."""
    path, names = readable[keys[0]]
    parquet = path.suffix == ".parquet"
    # a column a format may leave out reads as NULL
    wanted = ", ".join(
        f'{staging.read(_as_text(c.name, parquet), c.type)} as "{c.name}"'
        if c.name in names
        else f'null::{staging.stored_type(c.type)} as "{c.name}"'
        for c in schema.columns
    )
    paths = [str(readable[key][0]) for key in keys]
    params = {"paths": paths, "deals": [k[0] for k in keys], "scopes": [k[1] for k in keys]}
    if path.suffix != ".parquet":
        params["columns"] = {name: "VARCHAR" for name in names}
    position = "list_position($paths::varchar[], filename)"
    con.execute(
        f"insert into {table} select list_extract($deals::varchar[], {position}), "
        f"list_extract($scopes::varchar[], {position}), {wanted} "
        f"from {_reader(path.suffix)}",
        params,
    )


def _without_rows(con, table: str, schema: FileSchema, readable) -> list[Key]:
    """The readable files with a header and no rows, where the schema requires rows."""
    if schema.allow_empty:
        return []
    counts = dict(
        ((deal, scope), count)
        for deal, scope, count in con.execute(
            f"select deal_id, scope, count(*) from {table} group by all"
        ).fetchall()
    )
    return [key for key in readable if not counts.get(key)]


@dataclass(frozen=True)
class CellCheck:
    """A check of one staged row by itself: the field it names, the reason, the value shown with
    a finding and the predicate a failing row meets (SQL over the staged row)."""

    field: str
    reason: str
    shown: str
    failing: str
    params: tuple = ()

    def findings(self, table: str) -> str:
        return (
            f"select deal_id, scope, rowid, '{self.field}', '{self.reason}', {self.shown} "
            f"from {table} where {self.failing}"
        )


def absurd_bound(con, schema: FileSchema) -> str:
    """Above it an amount of one receivable is absurd: $10 million (schemas.MAX_AMOUNT), unless the
    shelf's receivables are that large (a small pool generated for a large deal has receivables of
    millions): in the Receivable Schedule, no receivable reaches a whole Cutoff Pool Balance (the
    largest of the shelf's deals); on the tapes, no amount reaches twice the largest Amount
    Financed of the loaded schedules."""
    largest = None
    if schema is RECEIVABLE_SCHEDULE and table_exists(con, "raw", "deals"):
        largest = con.execute("select max(initial_pool_balance) from raw.deals").fetchone()[0]
    elif schema is not RECEIVABLE_SCHEDULE and table_exists(con, "raw", "receivable_schedule"):
        largest = con.execute(
            "select 2 * max(amount_financed) from raw.receivable_schedule"
        ).fetchone()[0]
    return str(max(Decimal(MAX_AMOUNT), largest or Decimal(0)))


def cell_checks(schema: FileSchema, staging: Staging, bound: str = MAX_AMOUNT) -> list[CellCheck]:
    """Each column's checks: present, of its type, in cents, not negative, not absurd (over
    `bound`, for the columns that have one), a code accepted."""
    # the rows converted from an EX-102 filing are spared the checks its conventions break
    not_ex102 = f" and \"{schema.source_column}\" is distinct from 'ex102'"
    checks = []
    for column in schema.columns:
        name = f'"{column.name}"'
        label = column.name
        if column.required:
            # EX-102 leaves out what does not apply: NULL there, never 0 (ingestion/ex102.py)
            omitted = not_ex102 if column.omissible else ""
            checks.append(CellCheck(label, "missing value", "null", f"{name} is null{omitted}"))
        value = staging.value(column.name, column.type)
        if not staging.typed:  # typed, a value of another type fails the read
            invalid = f"{value} is null"
            if fraction_finding(column.type):
                # DuckDB casts hexadecimal and binary text ('0x10', '0b11') to an integer, never
                # to a decimal, and the typed read takes neither: a number is read as a decimal too
                invalid = f"({value} is null or {staging.exact(column.name)} is null)"
            checks.append(
                CellCheck(
                    label,
                    f"not a valid {column.type}{FORMS.get(column.type, '')}",
                    name,
                    f"{name} is not null and {invalid}",
                )
            )
        if fraction := fraction_finding(column.type):
            # money has cents, counts and days are whole, a rate its decimals: a cast would
            # round the rest away
            exact = staging.exact(column.name)
            checks.append(
                CellCheck(
                    label,
                    fraction,
                    name,
                    f"{exact} <> try_cast({exact} as {column.type})",
                )
            )
        if column.nonnegative:
            # EX-102 signs some amounts (credit balances, net principal increases: ex102.py)
            signed = not_ex102 if column.signed_in_ex102 else ""
            checks.append(CellCheck(label, "negative amount", name, f"{value} < 0{signed}"))
        if column.bounded:
            checks.append(
                CellCheck(
                    label,
                    f"absurd amount (over {bound})",
                    name,
                    f"{value} > ?::{column.type}",
                    (bound,),
                )
            )
        if column.allowed:
            checks.append(
                CellCheck(
                    label,
                    "value not in the accepted codes",
                    name,
                    f"{name} is not null and not list_contains(?::varchar[], {name})",
                    (list(column.allowed),),
                )
            )
    return checks


def set_checks(con, schema: FileSchema, with_periods: bool, staging: Staging) -> list[str]:
    """The checks across rows, files and tables, each a query of row_checks' columns: duplicate
    rows, receivables not in the schedule, the period's bounds (from the temp table
    stage_periods when `with_periods`), the tapes' consistency."""
    table = staging.table(schema.kind)
    parts = []
    keys = ", ".join(f'"{k}"' for k in schema.key)
    parts.append(
        f"select deal_id, scope, rowid, '{'+'.join(schema.key)}', 'duplicate row', "
        f"concat_ws('|', {keys}) from (select *, rowid, count(*) over "
        f"(partition by deal_id, scope, {keys}) as copies from {table}) as counted "
        "where copies > 1"
    )
    if schema.id_column:
        # an EX-102 filing keeps receivables that left the pool before the trust's starting
        # filing (zero balances, a zero-balance code): not in a schedule built from it, carrying
        # nothing (ingestion/ex102.py)
        left_before = (
            f"""coalesce(stage."{schema.source_column}" = 'ex102' and stage."zeroBalanceCode" """
            "is not null and "
            f"{staging.value('reportingPeriodBeginningLoanBalanceAmount', MONEY, 'stage')} = 0 "
            f"and {staging.value('reportingPeriodActualEndBalanceAmount', MONEY, 'stage')} = 0, "
            "false)"
            if schema.kind == "loan_status"
            else "false"
        )
        parts.append(
            f"select deal_id, scope, rowid, '{schema.id_column}', "
            "'receivable not in the Receivable Schedule', "
            f'"{schema.id_column}" from {table} as stage where not exists ('
            "select 1 from raw.receivable_schedule as schedule where schedule.deal_id = "
            f'stage.deal_id and schedule.receivable_id = stage."{schema.id_column}") '
            f"and not {left_before}"
        )
    if schema.period_columns and with_periods:
        for name, bound in zip(schema.period_columns, ("period_start", "period_end"), strict=True):
            parts.append(
                f"select stage.deal_id, stage.scope, stage.rowid, '{name}', "
                "'tape is for another Collection Period', "
                f'stage."{name}" from {table} as stage inner join stage_periods as period '
                f"using (deal_id, scope) where {staging.value(name, 'date', 'stage')} "
                f"<> period.{bound}"
            )
    if schema.date_in_period and with_periods:
        name = schema.date_in_period
        parts.append(
            f"select stage.deal_id, stage.scope, stage.rowid, '{name}', "
            "'date outside the Collection Period', "
            f'stage."{name}" from {table} as stage inner join stage_periods as period '
            f"using (deal_id, scope) where {staging.value(name, 'date', 'stage')} "
            "not between period.period_start and period.period_end"
        )
    if schema.kind == "loan_status" and with_periods:
        parts.append(tape_consistency_checks(con, staging))
    if schema.kind == "payment_transactions" and with_periods:
        parts.append(missing_transactions_check(staging))
    return parts


def tape_consistency_checks(con, staging: Staging = TEXT) -> str:
    """The loan-level tapes of the batch against themselves and against the chain of periods:

    - the ending balance follows from the beginning balance less principal collected, rebates
      and charge-off (zero once purchased; zero on a charged-off receivable with no balance left,
      whatever it pays: Art. I, amounts received on a Defaulted Receivable "from whatever source"
      are Liquidation Proceeds, however the servicer books them);
    - each receivable begins the period at the balance it ended the previous one (the first
      Collection Period: its Principal Balance in the Receivable Schedule);
    - every receivable outstanding at the end of the previous period is on the tape (the first
      period: every receivable of the schedule);
    - a restated period is checked against the next period already loaded too: its ending
      balances must be that period's beginning balances;
    - a receivable with no balance left is not reported current or delinquent (a paid-off or
      charged-off receivable does not come back).
    The previous period is taken from the batch if it is in it, else from what is loaded; one
    neither delivered nor loaded cannot be compared (the certificate gate withholds from it).
    """
    table = staging.table("loan_status")

    def _money(column: str, alias: str = "") -> str:
        return staging.value(column, MONEY, alias)

    begin, end = (
        "reportingPeriodBeginningLoanBalanceAmount",
        "reportingPeriodActualEndBalanceAmount",
    )
    has_loaded = table_exists(con, "raw", "loan_status")
    # the loaded periods next to the batch's, outside it (not every loaded row)
    loaded = (
        f'(select deal_id, collection_period as scope, "assetNumber", "{end}" as ending, '
        f'"{begin}" as beginning from raw.loan_status as loaded where not exists (select 1 '
        "from stage_periods as batch where batch.deal_id = loaded.deal_id and batch.scope = "
        "loaded.collection_period) and (loaded.deal_id, loaded.collection_period) in (select "
        "(deal_id, previous_scope) from stage_periods union all select (deal_id, next_scope) "
        "from stage_periods))"
        if has_loaded
        else f'(select deal_id, scope, "assetNumber", null::{MONEY} as ending, null::{MONEY} '
        f"as beginning from {table} where false)"
    )
    known = (  # the batch's and the loaded periods next to them
        f'(select deal_id, scope, "assetNumber", {_money(end)} as ending, '
        f"{_money(begin)} as beginning from {table} union all select * from {loaded})"
    )
    has_rows = (
        f"exists (select 1 from {table} as any_row where any_row.deal_id = period.deal_id "
        "and any_row.scope = period.scope)"
    )
    return f"""
        select deal_id, scope, rowid, '{end}', 'ending balance does not follow from the beginning
            balance, principal, rebates and charge-off', "{end}" from {table}
        where {_money(end)} is distinct from case when "loanStatus" = 'purchased' then 0
            when "loanStatus" in ('charged_off', 'liquidated') and {_money(begin)} = 0 then 0
            else {_money(begin)} - coalesce({_money("actualPrincipalCollectedAmount")}, 0)
            - coalesce({_money("rebateAmount")}, 0)
            - coalesce({_money("chargedoffPrincipalAmount")}, 0) end
            and {_money(begin)} is not null and {_money(end)} is not null
        union all
        select deal_id, scope, rowid, 'loanStatus', 'receivable with no balance reported as '
            || "loanStatus" || ' (paid off or charged off before?)', "loanStatus" from {table}
        where "loanStatus" in ('current', 'delinquent')
            and {_money(begin)} = 0 and {_money(end)} = 0
        union all
        select deal_id, scope, rowid, 'loanStatus', 'receivable reported paid in full with an
            ending balance of ' || "{end}", "loanStatus" from {table}
        where "loanStatus" = 'paid_in_full' and {_money(end)} > 0
        union all
        select stage.deal_id, stage.scope, stage.rowid, '{begin}', 'beginning balance is not the
            Principal Balance in the Receivable Schedule (' || schedule.principal_balance || ')',
            stage."{begin}"
        from {table} as stage
        inner join stage_periods as period using (deal_id, scope)
        inner join raw.receivable_schedule as schedule
            on schedule.deal_id = stage.deal_id and schedule.receivable_id = stage."assetNumber"
        where period.is_first and {_money(begin, "stage")} <> schedule.principal_balance
        union all
        select stage.deal_id, stage.scope, stage.rowid, '{begin}', 'beginning balance is not the
            ending balance of ' || period.previous_scope || ' (' || prior.ending || ')',
            stage."{begin}"
        from {table} as stage
        inner join stage_periods as period using (deal_id, scope)
        inner join {known} as prior
            on prior.deal_id = stage.deal_id and prior.scope = period.previous_scope
            and prior."assetNumber" = stage."assetNumber"
        where not period.is_first and {_money(begin, "stage")} <> prior.ending
        union all
        select stage.deal_id, stage.scope, stage.rowid, '{end}', 'ending balance is not the
            beginning balance of ' || period.next_scope || ', already loaded (' || later.beginning
            || '): a restatement must agree with the periods after it', stage."{end}"
        from {table} as stage
        inner join stage_periods as period using (deal_id, scope)
        inner join {loaded} as later
            on later.deal_id = stage.deal_id and later.scope = period.next_scope
            and later."assetNumber" = stage."assetNumber"
        where {_money(end, "stage")} <> later.beginning
        union all
        select stage.deal_id, stage.scope, stage.rowid, '{end}', 'receivable outstanding at the
            end of the period is missing from ' || period.next_scope || ', already loaded: a
            restatement must agree with the periods after it', stage."{end}"
        from {table} as stage
        inner join stage_periods as period using (deal_id, scope)
        where {_money(end, "stage")} > 0
            and exists (select 1 from {loaded} as any_later where any_later.deal_id =
                stage.deal_id and any_later.scope = period.next_scope)
            and not exists (select 1 from {loaded} as later where later.deal_id = stage.deal_id
                and later.scope = period.next_scope and later."assetNumber" = stage."assetNumber")
        union all
        select period.deal_id, period.scope, null, 'assetNumber', 'receivable outstanding at the
            end of ' || period.previous_scope || ' is missing from the tape', prior."assetNumber"
        from stage_periods as period
        inner join {known} as prior
            on prior.deal_id = period.deal_id and prior.scope = period.previous_scope
        where not period.is_first and prior.ending > 0 and not exists (
            select 1 from {table} as stage where stage.deal_id = period.deal_id
            and stage.scope = period.scope and stage."assetNumber" = prior."assetNumber")
            and {has_rows}
        union all
        select period.deal_id, period.scope, null, 'assetNumber', 'receivable of the Receivable
            Schedule is missing from the first Collection Period''s tape', schedule.receivable_id
        from stage_periods as period
        inner join raw.receivable_schedule as schedule on schedule.deal_id = period.deal_id
        where period.is_first and not exists (
            select 1 from {table} as stage where stage.deal_id = period.deal_id
            and stage.scope = period.scope and stage."assetNumber" = schedule.receivable_id)
            and {has_rows}
        union all
        -- a tape with no rows is a delivery only once no receivable is outstanding
        select period.deal_id, period.scope, null, null, 'file has a header but no rows, while '
            || count(*) || ' receivables were outstanding at the end of '
            || any_value(
                case when period.is_first then 'the Cutoff Date' else period.previous_scope end
            ),
            null
        from stage_periods as period
        left join {known} as prior
            on prior.deal_id = period.deal_id and prior.scope = period.previous_scope
            and prior.ending > 0 and not period.is_first
        left join raw.receivable_schedule as schedule
            on schedule.deal_id = period.deal_id and period.is_first
        where not {has_rows}
            and (prior."assetNumber" is not null or schedule.receivable_id is not null)
        group by period.deal_id, period.scope
    """


def missing_transactions_check(staging: Staging = TEXT) -> str:
    """A transactions file with a header and no rows, while the period's tape (staged before it,
    same batch) reports money paid: the payments behind the tape's collections were not
    delivered. A file with no rows is a delivery when nothing was paid."""
    tape, transactions = staging.table("loan_status"), staging.table("payment_transactions")
    paid = staging.value("totalActualAmountPaid", MONEY, "tape")
    return f"""
        select tape.deal_id, tape.scope, null, null, 'no payment transactions delivered (the
            file has a header and no rows), while the tape reports ' || count(*) filter (where
            {paid} > 0) || ' receivables paying ' || sum({paid}), null
        from {tape} as tape
        where not exists (select 1 from {transactions} as any_row
            where any_row.deal_id = tape.deal_id and any_row.scope = tape.scope)
        group by tape.deal_id, tape.scope
        having sum({paid}) > 0
    """


def stage_periods(con, periods: dict[Key, tuple[dt.date, dt.date]]) -> None:
    """The batch's Collection Periods: bounds, the periods before and after each, and whether it
    is the trust's first (the one that starts the day after its Cutoff Date)."""
    cutoffs = (
        dict(con.execute("select deal_id, cutoff_date from raw.deals").fetchall())
        if table_exists(con, "raw", "deals")
        else {}
    )
    con.execute(
        "create or replace temp table stage_periods (deal_id varchar, scope varchar, "
        "period_start date, period_end date, previous_scope varchar, next_scope varchar, "
        "is_first boolean)"
    )
    insert_rows(
        con,
        "stage_periods",
        [
            (
                deal_id,
                scope,
                start,
                end,
                f"{start - dt.timedelta(days=1):%Y-%m}",
                f"{end + dt.timedelta(days=1):%Y-%m}",
                deal_id in cutoffs and start == cutoffs[deal_id] + dt.timedelta(days=1),
            )
            for (deal_id, scope), (start, end) in periods.items()
        ],
    )


FINDINGS_KEPT = 100  # per file: the findings an error carries (raw.quarantine holds them all)


def findings_table(kind: str) -> str:
    return f"findings_{kind}"


def row_checks(con, schema: FileSchema, with_periods: bool) -> tuple[str, list]:
    """One query returning (deal_id, scope, row, field, reason, value) for every finding in the
    staged text of a batch of `schema`'s files."""
    cells = cell_checks(schema, TEXT, absurd_bound(con, schema))
    parts = set_checks(con, schema, with_periods, TEXT)
    params = [value for check in cells for value in check.params]
    table = TEXT.table(schema.kind)
    return " union all ".join([c.findings(table) for c in cells] + parts), params


def passes_checks(con, schema: FileSchema, with_periods: bool) -> bool:
    """Whether the typed staging of the batch (stage_typed) passes every check: the cell checks
    as one filter of one scan (which one fails does not matter here), then the others."""
    cells = cell_checks(schema, TYPED, absurd_bound(con, schema))
    parts = set_checks(con, schema, with_periods, TYPED)
    failing = " or ".join(f"({check.failing})" for check in cells)
    return con.execute(
        f"select not exists (select 1 from {TYPED.table(schema.kind)} where {failing}) "
        f"and not exists ({' union all '.join(parts)})",
        [value for check in cells for value in check.params],
    ).fetchone()[0]


def check_rows(
    con,
    schema: FileSchema,
    files: dict[Key, Path],
    periods: dict[Key, tuple[dt.date, dt.date]] | None = None,
) -> dict[Key, list[Finding]]:
    """Every failing cell of the staged files, per key, naming file, row and field: all of them
    in the temp table findings_table(kind) (deal_id, scope, row_number, field, reason, value),
    the first FINDINGS_KEPT per key returned (a tape of millions of bad rows stays in DuckDB,
    within its memory limit, and is quarantined from there)."""
    sql, params = row_checks(con, schema, bool(periods))
    stage, table = TEXT.table(schema.kind), findings_table(schema.kind)
    con.execute(
        f"create or replace temp table {table} as "
        f"with firsts as (select deal_id, scope, min(rowid) as first_row_id from {stage} "
        "group by all) "
        "select found.deal_id, found.scope, found.row_id - firsts.first_row_id + 1 as row_number, "
        "found.field, regexp_replace(trim(found.reason), '\\s+', ' ', 'g') as reason, found.value "
        f"from ({sql}) as found(deal_id, scope, row_id, field, reason, value) "
        "left join firsts using (deal_id, scope)",
        params,
    )
    findings: dict[Key, list[Finding]] = {key: [] for key in files}
    rows = con.execute(
        f"select deal_id, scope, row_number, field, reason, value from {table} "
        "qualify row_number() over (partition by deal_id, scope "
        "order by row_number nulls last, field, reason) <= ? "
        "order by deal_id, scope, row_number nulls last, field, reason",
        [FINDINGS_KEPT],
    ).fetchall()
    for deal_id, scope, row, field, reason, value in rows:
        if (key := (deal_id, scope)) in findings:
            findings[key].append(Finding(str(files[key]), row, field, reason, value))
    return findings
