"""The typed read a clean batch is loaded from (ingestion/validation.py, Staging) finds at least
what the checks of the text find, and loads the same values."""

import csv
import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import DEAL_ID, deliveries
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from test_ingestion import PERIOD, load_period, warehouse_with_schedule

from dagster_project.ingestion import loader, schemas
from dagster_project.ingestion.schemas import MAX_AMOUNT, MONEY, Column, FileSchema
from dagster_project.ingestion.validation import (
    TEXT,
    TYPED,
    check_rows,
    passes_checks,
    prepare_files,
    stage_files,
    stage_typed,
)

# one column of each kind of check the screen must not miss
SCHEMA = FileSchema(
    kind="cells",
    table="raw.cells",
    key=("id",),
    columns=(
        Column("id", "varchar"),
        schemas.money("amount"),
        Column("net_worth", MONEY, required=False),  # no maximum: billions are valid
        Column("apr", "decimal(8, 6)", nonnegative=True),
        Column("term", "integer", nonnegative=True, required=False),
        Column("paid_through", "date", required=False),
        Column("flag", "boolean", required=False),
        Column("code", "varchar", required=False, allowed=("1", "99")),
    ),
)

TRICKY = [
    "", "0", "-0", "1", "-1", "1.5", "1.00", "1.005", "1.004999", "0.0000000001", "1e2", "1E-3",
    "+5", " 7", "7 ", "0x10", "1_000", "1,5", ".5", "5.", "nan", "inf", "-0.001", "abc", "99",
    "9999999.99", "10000000.00", "10000000.01", "99999999.99", "100000000", "12345678901234567",
    "2015-10-01", "2015-1-1", "2015-02-30", "20151001", "2015-10-01 00:00:00", "true", "no", "t",
    "2147483648", "-2147483649", "12.1234567", "800.55",
]  # fmt: skip


def write_cells(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(SCHEMA.names)
        writer.writerows(rows)


VALID = ["1234.56", "", "0.0525", "60", "2015-10-01", "true", "99"]  # a clean row's cells
CELL = st.integers(0, 9).flatmap(  # mostly the clean cell, else a tricky or a random text
    lambda n: st.none() if n < 7 else st.sampled_from(TRICKY) if n < 9 else st.text(max_size=6)
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(CELL, min_size=7, max_size=7), min_size=1, max_size=2))
@example(changes=[[None, None, None, "0x10", None, None, None]])  # hexadecimal: see below
def test_a_batch_the_typed_read_passes_has_no_finding_as_text_and_the_same_values(
    tmp_path, changes
):
    rows = [
        [
            f"r{number}",
            *(valid if new is None else new for valid, new in zip(VALID, cells, strict=True)),
        ]
        for number, cells in enumerate(changes)
    ]
    if any("\x00" in value or "\r" in value for row in rows for value in row):
        return  # not a CSV value
    path = tmp_path / "cells.csv"
    write_cells(path, rows)
    con = duckdb.connect()
    prepared = prepare_files(SCHEMA, {(DEAL_ID, "x"): path}, tmp_path)
    typed_clean = stage_typed(con, SCHEMA, prepared) and passes_checks(con, SCHEMA, False)
    findings = stage_files(con, SCHEMA, prepared)
    findings = {k: v + check_rows(con, SCHEMA, {k: path}).get(k, []) for k, v in findings.items()}
    text_clean = not any(findings.values())
    event(f"typed clean: {typed_clean}, text clean: {text_clean}")
    if typed_clean:
        assert text_clean, findings
        values = ", ".join(TYPED.value(c.name, c.type) for c in SCHEMA.columns)
        as_text = ", ".join(TEXT.value(c.name, c.type) for c in SCHEMA.columns)
        typed = con.execute(f"select {values} from {TYPED.table('cells')} order by rowid")
        assert (
            typed.fetchall()
            == con.execute(f"select {as_text} from {TEXT.table('cells')} order by rowid").fetchall()
        )
    elif text_clean:
        # the typed read is stricter where the text is valid in one case only here (the ids are
        # unique): a value of 100 million or more in a money column without a maximum or a count
        (huge,) = con.execute(
            "select bool_or(greatest(abs(try_cast(net_worth as decimal(38, 10))), "
            f"abs(try_cast(term as decimal(38, 10)))) >= 100000000) from {TEXT.table('cells')}"
        ).fetchone()
        assert huge, rows


@pytest.mark.parametrize(
    ("column", "value"),
    [
        *(
            ("amount", value)
            for value in ("1.005", "-1", "abc", MAX_AMOUNT[:-1] + "1", "", "1e400", "1" * 20)
        ),
        *(("term", value) for value in ("1.5", "-1", "0.0000000001", "2147483648", "x")),
        ("paid_through", "2015-02-30"),
        ("code", "2"),
    ],
)
def test_each_bad_cell_fails_the_typed_read_or_its_checks(tmp_path, column, value):
    row = ["r0", *VALID]
    row[SCHEMA.names.index(column)] = value
    path = tmp_path / "cells.csv"
    write_cells(path, [row])
    con = duckdb.connect()
    prepared = prepare_files(SCHEMA, {(DEAL_ID, "x"): path}, tmp_path)
    assert not (stage_typed(con, SCHEMA, prepared) and passes_checks(con, SCHEMA, False))


@pytest.mark.parametrize("value", ["0x10", "0b11", "0X1F"])
def test_a_hexadecimal_or_binary_count_is_not_a_valid_integer_read_as_text(tmp_path, value):
    """DuckDB casts '0x10' to the integer 16; a tape's count is a decimal number, so the text
    checks name the cell (the typed read rejects it already)."""
    row = ["r0", *VALID]
    row[SCHEMA.names.index("term")] = value
    path = tmp_path / "cells.csv"
    write_cells(path, [row])
    con = duckdb.connect()
    prepared = prepare_files(SCHEMA, {(DEAL_ID, "x"): path}, tmp_path)
    assert not stage_typed(con, SCHEMA, prepared)
    findings = stage_files(con, SCHEMA, prepared)
    findings = {k: v + check_rows(con, SCHEMA, {k: path}).get(k, []) for k, v in findings.items()}
    found = [(f.field, f.reason, f.value) for fs in findings.values() for f in fs]
    assert found == [("term", "not a valid integer", value)], found


def test_a_clean_delivery_loads_typed_the_rows_the_text_would_load(
    tmp_path, small_deal, monkeypatch
):
    """The same delivery loaded through the typed read and (with it switched off) as text."""
    loaded = {}
    for way in ("typed", "text"):
        folder = tmp_path / way
        shutil.copytree(deliveries(small_deal) / PERIOD, folder)
        con = warehouse_with_schedule(tmp_path / f"{way}.duckdb", small_deal)
        staged_as_text = []
        monkeypatch.setattr(
            loader,
            "stage_files",
            lambda *a, s=staged_as_text, read=loader.stage_files: s.append(1) or read(*a),
        )
        if way == "text":
            monkeypatch.setattr(loader, "stage_typed", lambda *_: False)
        load_period(con, folder)
        assert bool(staged_as_text) == (way == "text")  # a clean delivery is never read twice
        loaded[way] = {
            table: con.execute(f"select * from raw.{table} order by all").fetchall()
            for table in ("loan_status", "payment_transactions")
        }
        con.close()
        monkeypatch.undo()
    assert loaded["typed"]["loan_status"] and loaded["typed"] == loaded["text"]
