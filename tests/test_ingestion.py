"""Each ingestion failure mode: a clear finding (file, row, field), quarantine, nothing lost."""

import csv
import datetime as dt
import gzip
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from conftest import DEAL_ID, deliveries

from dagster_project.business_calendar import period_for_collection_month
from dagster_project.deal import load_deal
from dagster_project.ingestion import schemas
from dagster_project.ingestion.deal_tables import load_deal_tables
from dagster_project.ingestion.loader import Delivery, IngestionError, load_deliveries, load_files
from dagster_project.ingestion.loads import hold_schedules, rejected_schedule

PERIOD = "2015-10"


def warehouse_with_schedule(path: Path, small_deal: Path) -> duckdb.DuckDBPyConnection:
    """A warehouse holding the small deal's terms and Receivable Schedule."""
    connection = duckdb.connect(str(path))
    load_deal_tables(connection, [load_deal()])
    load_files(
        connection,
        DEAL_ID,
        "receivable_schedule",
        [(schemas.RECEIVABLE_SCHEDULE, small_deal / DEAL_ID / "receivable_schedule.csv")],
    )
    return connection


@pytest.fixture()
def con(tmp_path, small_deal):
    connection = warehouse_with_schedule(tmp_path / "w.duckdb", small_deal)
    yield connection
    connection.close()


@pytest.fixture()
def delivery(tmp_path, small_deal) -> Path:
    folder = tmp_path / "delivery"
    shutil.copytree(deliveries(small_deal) / PERIOD, folder)
    return folder


def tape_delivery(folder: Path, key: str = PERIOD, files=None) -> Delivery:
    period = period_for_collection_month(load_deal(), key)
    files = files or [
        (schemas.LOAN_STATUS, folder / "loan_status.csv"),
        (schemas.PAYMENT_TRANSACTIONS, folder / "payment_transactions.csv"),
    ]
    return Delivery(
        DEAL_ID, key, files, period.collection_period_start, period.collection_period_end
    )


def load_period(con, folder: Path, key: str = PERIOD):
    (result,) = load_deliveries(con, [tape_delivery(folder, key)])
    if isinstance(result, IngestionError):
        raise result
    return result


def rewrite(path: Path, change):
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    change(rows)
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)


def set_cell(path: Path, row: int, column: str, value: str):
    def change(rows):
        rows[row][rows[0].index(column)] = value

    rewrite(path, change)


def rejected(con, folder, key=PERIOD) -> IngestionError:
    with pytest.raises(IngestionError) as info:
        load_period(con, folder, key)
    return info.value


def test_a_good_delivery_loads_and_loading_it_again_changes_nothing(con, delivery):
    first = load_period(con, delivery)
    assert first.changed and first.rows["loan_status"] > 0
    count = con.execute("select count(*) from raw.loan_status").fetchone()[0]
    again = load_period(con, delivery)
    assert not again.changed
    assert con.execute("select count(*) from raw.loan_status").fetchone()[0] == count
    assert (
        con.execute(
            "select count(*) from raw.deliveries where status = 'loaded' and scope = ?", [PERIOD]
        ).fetchone()[0]
        == 2
    )


@pytest.mark.parametrize(
    "column, value, reason",
    [
        ("actualPrincipalCollectedAmount", "-5.00", "negative amount"),
        ("actualPrincipalCollectedAmount", "12,5", "not a valid decimal(18, 2)"),
        ("currentDelinquencyStatus", "ten", "not a valid integer"),
        ("reportingPeriodActualEndBalanceAmount", "99999999.00", "absurd amount"),
        ("assetNumber", "99999999999", "receivable not in the Receivable Schedule"),
        ("reportingPeriodEndingDate", "2015-11-30", "tape is for another Collection Period"),
        ("loanStatus", "zombie", "value not in the accepted codes"),
        ("loanStatus", "paid_in_full", "receivable reported paid in full with an ending balance"),
        ("interestPaidThroughDate", "", "missing value"),
    ],
)
def test_a_bad_cell_names_file_row_and_field_and_quarantines_the_row(
    con, delivery, column, value, reason
):
    set_cell(delivery / "loan_status.csv", 3, column, value)
    error = rejected(con, delivery)
    finding = next(f for f in error.findings if f.field == column and reason in f.reason)
    assert finding.row == 3
    assert finding.file.endswith("loan_status.csv")
    assert f"loan_status.csv, row 3, field '{column}'" in str(error)
    quarantined = con.execute(
        "select row_number, field, reason, record from raw.quarantine "
        "where field = ? and contains(reason, ?)",
        [column, reason],
    ).fetchall()
    assert quarantined and quarantined[0][0] == 3
    assert quarantined[0][3] is not None  # the whole offending record is kept
    assert con.execute("select count(*) from raw.loan_status").fetchone()[0] == 0


def test_a_missing_renamed_or_extra_column_rejects_the_file(con, delivery):
    def rename(rows):
        rows[0][rows[0].index("rebateAmount")] = "rebate_amt"

    rewrite(delivery / "loan_status.csv", rename)
    error = rejected(con, delivery)
    reasons = {(f.field, f.reason) for f in error.findings}
    assert ("rebateAmount", "required column is missing") in reasons
    assert ("rebate_amt", "unexpected column (renamed or extra?)") in reasons


def test_duplicate_rows_are_rejected(con, delivery):
    rewrite(delivery / "loan_status.csv", lambda rows: rows.append(rows[1]))
    error = rejected(con, delivery)
    assert {f.row for f in error.findings if f.reason == "duplicate row"} == {
        1,
        len((delivery / "loan_status.csv").read_text().splitlines()) - 1,
    }


def test_transaction_dated_outside_the_period(con, delivery):
    set_cell(delivery / "payment_transactions.csv", 2, "transactionDate", "2015-12-02")
    error = rejected(con, delivery)
    assert any(
        f.reason == "date outside the Collection Period" and f.row == 2 for f in error.findings
    )


def test_a_tape_delivered_for_the_wrong_period(con, delivery):
    error = rejected(con, delivery, key="2015-11")
    assert all(
        "another Collection Period" in f.reason or "outside" in f.reason for f in error.findings
    )


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda p: p.write_bytes(b""), "file is empty"),
        (lambda p: p.write_text(p.read_text().splitlines()[0] + "\n"), "header but no rows"),
        (
            lambda p: p.write_bytes(p.read_bytes().replace(b"current", b"curr\xe9nt", 1)),
            "cannot be read",
        ),
        (lambda p: p.unlink(), "missing from the delivery"),
    ],
)
def test_unreadable_files_are_rejected_whole(con, delivery, damage, reason):
    damage(delivery / "loan_status.csv")
    error = rejected(con, delivery)
    assert any(reason in f.reason and f.row is None for f in error.findings), error


def test_a_corrupt_gzip_file_is_rejected_whole(con, delivery):
    source = delivery / "loan_status.csv"
    packed = bytearray(gzip.compress(source.read_bytes()))
    packed[12:40] = bytes(byte ^ 0xFF for byte in packed[12:40])  # the deflate stream's start
    corrupt = delivery / "loan_status.csv.gz"
    corrupt.write_bytes(bytes(packed))
    source.unlink()
    files = [
        (schemas.LOAN_STATUS, corrupt),
        (schemas.PAYMENT_TRANSACTIONS, delivery / "payment_transactions.csv"),
    ]
    (result,) = load_deliveries(con, [tape_delivery(delivery, files=files)])
    assert isinstance(result, IngestionError)
    assert any(
        f.file == str(corrupt) and f.row is None and "cannot be read" in f.reason
        for f in result.findings
    ), result


def test_a_folder_named_as_a_file_is_rejected_not_read(con, delivery):
    path = delivery / "payment_transactions.csv"
    path.unlink()
    path.mkdir()
    error = rejected(con, delivery)
    assert any(f.file == str(path) and "not a file" in f.reason for f in error.findings), error


def test_a_file_cut_off_mid_row_names_the_data_row_and_the_first_missing_field(con, delivery):
    path = delivery / "loan_status.csv"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    lines = path.read_text().splitlines()
    header, last = lines[0].split(","), lines[-1].split(",")
    (finding,) = rejected(con, delivery).findings
    assert finding.row == len(lines) - 1  # the data row (1 = the row after the header)
    assert finding.field == header[len(last)]
    assert "file cut off or a separator missing" in finding.reason


def test_a_file_cut_off_inside_its_last_value_is_rejected_whole(con, delivery):
    """Every field is there (79860.1 for 79860.12): only the missing line break tells."""
    path = delivery / "payment_transactions.csv"
    path.write_bytes(path.read_bytes().rstrip(b"\r\n")[:-1])
    error = rejected(con, delivery)
    assert any(
        f.file == str(path) and f.row is None and "does not end with a line break" in f.reason
        for f in error.findings
    ), error


def test_a_bad_delivery_does_not_touch_what_was_loaded(con, delivery, tmp_path):
    load_period(con, delivery)
    before = con.execute(
        "select count(*), sum(reportingPeriodActualEndBalanceAmount) from raw.loan_status"
    ).fetchone()
    set_cell(delivery / "loan_status.csv", 1, "rebateAmount", "-1.00")
    rejected(con, delivery)
    after = con.execute(
        "select count(*), sum(reportingPeriodActualEndBalanceAmount) from raw.loan_status"
    ).fetchone()
    assert before == after
    statuses = dict(
        con.execute(
            "select status, count(*) from raw.deliveries where scope = ? group by 1", [PERIOD]
        ).fetchall()
    )
    assert statuses == {"loaded": 2, "rejected": 1}


def test_a_restatement_replaces_the_period_and_keeps_the_earlier_delivery(con, delivery):
    load_period(con, delivery)
    set_cell(delivery / "loan_status.csv", 1, "reportingPeriodScheduledPaymentAmount", "1.23")
    result = load_period(con, delivery)
    assert result.changed and result.restated
    assert (
        con.execute(
            "select count(*) from raw.loan_status where "
            "reportingPeriodScheduledPaymentAmount = 1.23"
        ).fetchone()[0]
        == 1
    )
    kinds = con.execute(
        "select status, count(*) from raw.deliveries where scope = ? and "
        "file_kind = 'loan_status' group by 1 order by 1",
        [PERIOD],
    ).fetchall()
    assert kinds == [("loaded", 1), ("superseded", 1)]


def test_a_restatement_without_transactions_replaces_the_period_s_transactions_too(con, delivery):
    """A period restated as an EX-102 filing (a tape, no transaction file): the transactions the
    earlier delivery loaded for it are no longer delivered; they go, and are superseded."""
    load_period(con, delivery)
    set_cell(delivery / "loan_status.csv", 1, "remainingTermToMaturityNumber", "1")
    tape_only = [(schemas.LOAN_STATUS, delivery / "loan_status.csv")]
    (result,) = load_deliveries(con, [tape_delivery(delivery, files=tape_only)])
    assert not isinstance(result, IngestionError) and result.restated
    assert con.execute("select count(*) from raw.payment_transactions").fetchone() == (0,)
    assert con.execute(
        "select file_kind, status from raw.deliveries where scope = ? order by file_kind, status",
        [PERIOD],
    ).fetchall() == [
        ("loan_status", "loaded"),
        ("loan_status", "superseded"),
        ("payment_transactions", "superseded"),
    ]


def test_an_ending_balance_that_does_not_follow_is_quarantined(con, delivery):
    with (delivery / "loan_status.csv").open(newline="") as handle:
        row = list(csv.DictReader(handle))[1]  # data row 2
    wrong = f"{float(row['reportingPeriodActualEndBalanceAmount']) + 1:.2f}"
    set_cell(delivery / "loan_status.csv", 2, "reportingPeriodActualEndBalanceAmount", wrong)
    error = rejected(con, delivery)
    finding = next(f for f in error.findings if "does not follow" in f.reason)
    assert (finding.row, finding.field, finding.value) == (
        2,
        "reportingPeriodActualEndBalanceAmount",
        wrong,
    )


def test_the_first_period_begins_at_the_schedule_balances(con, delivery):
    set_cell(delivery / "loan_status.csv", 1, "reportingPeriodBeginningLoanBalanceAmount", "1.00")
    error = rejected(con, delivery)
    assert any(
        "not the Principal Balance in the Receivable Schedule" in f.reason and f.row == 1
        for f in error.findings
    )


@pytest.fixture()
def next_delivery(tmp_path, small_deal) -> Path:
    folder = tmp_path / "next"
    shutil.copytree(deliveries(small_deal) / "2015-11", folder)
    return folder


def test_a_beginning_balance_that_breaks_from_the_previous_period(con, delivery, next_delivery):
    load_period(con, delivery)
    set_cell(
        next_delivery / "loan_status.csv", 1, "reportingPeriodBeginningLoanBalanceAmount", "7.77"
    )
    error = rejected(con, next_delivery, key="2015-11")
    assert any(
        "not the ending balance of 2015-10" in f.reason
        and f.row == 1
        and f.field == "reportingPeriodBeginningLoanBalanceAmount"
        for f in error.findings
    )


def test_a_receivable_missing_from_the_tape_is_named(con, delivery, next_delivery):
    load_period(con, delivery)
    path = next_delivery / "loan_status.csv"
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    dropped = rows.pop(5)[0]
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    transactions = next_delivery / "payment_transactions.csv"
    rewrite(
        transactions,
        lambda rows: rows.__setitem__(slice(None), [r for r in rows if r[0] != dropped]),
    )
    error = rejected(con, next_delivery, key="2015-11")
    missing = [f for f in error.findings if "missing from the tape" in f.reason]
    assert [(f.field, f.value, f.row) for f in missing] == [("assetNumber", dropped, None)]
    assert "2015-10" in missing[0].reason
    assert (
        con.execute(
            "select count(*) from raw.quarantine where field = 'assetNumber' and value = ?",
            [dropped],
        ).fetchone()[0]
        == 1
    )


def test_the_same_file_under_another_name_is_the_same_delivery(con, delivery):
    load_period(con, delivery)
    renamed = delivery.parent / "renamed"
    renamed.mkdir()
    files = [
        (schemas.LOAN_STATUS, renamed / "status_tape_resent.csv"),
        (schemas.PAYMENT_TRANSACTIONS, renamed / "transactions_resent.csv"),
    ]
    shutil.copyfile(delivery / "loan_status.csv", files[0][1])
    shutil.copyfile(delivery / "payment_transactions.csv", files[1][1])
    (again,) = load_deliveries(con, [tape_delivery(renamed, files=files)])
    assert not again.changed  # its SHA-256 is loaded: nothing changes


def _as_parquet(path: Path) -> Path:
    out = path.with_suffix(".parquet")
    duckdb.connect().execute(
        f"copy (select * from read_csv('{path}', all_varchar = true)) to '{out}' (format parquet)"
    )
    return out


def test_parquet_dates_written_as_timestamps_at_midnight_load_as_dates(con, delivery):
    """pandas writes a date column as a Parquet TIMESTAMP: midnight is the date; another time of
    day in a date column is a finding."""
    dates = [c.name for c in schemas.LOAN_STATUS.columns if c.type == "date" and c.in_every_file]
    tape = delivery / "loan_status.csv"
    stamped = ", ".join(f'nullif("{d}", \'\')::timestamp as "{d}"' for d in dates)
    duckdb.connect().execute(
        f"copy (select * replace ({stamped}) from read_csv('{tape}', all_varchar = true)) "
        f"to '{tape.with_suffix('.parquet')}' (format parquet)"
    )
    files = [
        (schemas.LOAN_STATUS, tape.with_suffix(".parquet")),
        (schemas.PAYMENT_TRANSACTIONS, delivery / "payment_transactions.csv"),
    ]
    (result,) = load_deliveries(con, [tape_delivery(delivery, files=files)])
    assert not isinstance(result, IngestionError), result
    (loaded,) = con.execute(
        'select "interestPaidThroughDate" from raw.loan_status order by all limit 1'
    ).fetchone()
    assert isinstance(loaded, dt.date) and not isinstance(loaded, dt.datetime)


def test_parquet_empty_text_is_no_value_as_in_csv(con, delivery):
    """A Parquet tape that writes no value as '' (a missing zero-balance code, an omitted amount)
    loads as its CSV does: NULL, not a code or amount that is not accepted."""
    for name in ("loan_status", "payment_transactions"):
        duckdb.connect().execute(
            f"copy (select coalesce(columns(*), '') from read_csv('{delivery / name}.csv', "
            f"all_varchar = true)) to '{delivery / name}.parquet' (format parquet)"
        )
    empty = (
        duckdb.connect()
        .execute(
            f"select count(*) from '{delivery / 'loan_status.parquet'}' "
            "where \"zeroBalanceCode\" = ''"
        )
        .fetchone()[0]
    )
    assert empty > 0  # the file does carry '' for the codes the CSV leaves empty
    files = [
        (schemas.LOAN_STATUS, delivery / "loan_status.parquet"),
        (schemas.PAYMENT_TRANSACTIONS, delivery / "payment_transactions.parquet"),
    ]
    (result,) = load_deliveries(con, [tape_delivery(delivery, files=files)])
    assert not isinstance(result, IngestionError), result
    assert (
        con.execute(
            'select count(*) from raw.loan_status where "zeroBalanceCode" is null'
        ).fetchone()[0]
        == empty
    )


@pytest.mark.parametrize("file_format", ["csv", "parquet"])
def test_a_batch_names_each_bad_row_in_its_own_file(con, small_deal, tmp_path, file_format):
    """Several periods staged by one read: each finding still names its file and its row there,
    and the quarantine keeps that row."""
    deal = load_deal()
    periods = ["2015-10", "2015-11", "2015-12"]
    bad_rows = {"2015-11": 3, "2015-12": 7}
    batch = []
    for period in periods:
        folder = tmp_path / "batch" / period
        shutil.copytree(deliveries(small_deal) / period, folder)
        if period in bad_rows:
            set_cell(folder / "loan_status.csv", bad_rows[period], "rebateAmount", "-1.00")
        files = [
            (schemas.LOAN_STATUS, folder / "loan_status.csv"),
            (schemas.PAYMENT_TRANSACTIONS, folder / "payment_transactions.csv"),
        ]
        if file_format == "parquet":
            files = [(schema, _as_parquet(path)) for schema, path in files]
        bounds = period_for_collection_month(deal, period)
        batch.append(
            Delivery(
                DEAL_ID, period, files, bounds.collection_period_start, bounds.collection_period_end
            )
        )
    first, *rejected_ones = load_deliveries(con, batch)
    assert not isinstance(first, IngestionError) and first.changed
    for period, error in zip(periods[1:], rejected_ones, strict=True):
        assert isinstance(error, IngestionError)
        (finding,) = [f for f in error.findings if f.field == "rebateAmount"]
        assert finding.row == bad_rows[period] and f"/{period}/loan_status." in finding.file
        with (tmp_path / "batch" / period / "loan_status.csv").open(newline="") as handle:
            asset = list(csv.DictReader(handle))[bad_rows[period] - 1]["assetNumber"]
        (record,) = con.execute(
            "select record ->> 'assetNumber' from raw.quarantine "
            "where scope = ? and field = 'rebateAmount'",
            [period],
        ).fetchone()
        assert record == asset
    loaded = con.execute(
        "select collection_period, count(*) from raw.loan_status group by 1"
    ).fetchall()
    with (tmp_path / "batch" / periods[0] / "loan_status.csv").open(newline="") as handle:
        assert loaded == [(periods[0], sum(1 for _ in csv.DictReader(handle)))]


def test_a_file_given_for_two_scopes_is_staged_for_each(con, delivery, tmp_path):
    from dagster_project.ingestion.validation import (
        TEXT,
        TYPED,
        prepare_files,
        stage_files,
        stage_typed,
    )

    path = delivery / "loan_status.csv"
    first, second = (DEAL_ID, "first"), (DEAL_ID, "second")
    prepared = prepare_files(schemas.LOAN_STATUS, {first: path, second: path}, tmp_path)
    assert stage_files(con, schemas.LOAN_STATUS, prepared) == {first: [], second: []}
    assert stage_typed(con, schemas.LOAN_STATUS, prepared)
    with path.open(newline="") as handle:
        rows = sum(1 for _ in csv.DictReader(handle))
    for staging in (TEXT, TYPED):
        counts = con.execute(
            f"select scope, count(*) from {staging.table('loan_status')} group by 1 order by 1"
        ).fetchall()
        assert counts == [("first", rows), ("second", rows)]


# ---- attacks of a sloppy or hostile servicer (each names file, row and field) ----


def test_money_with_fractions_of_a_cent_is_rejected_not_rounded(con, delivery):
    set_cell(delivery / "loan_status.csv", 4, "actualPrincipalCollectedAmount", "5435.789")
    error = rejected(con, delivery)
    finding = next(f for f in error.findings if "fractions of a cent" in f.reason)
    assert (finding.row, finding.field, finding.value) == (
        4,
        "actualPrincipalCollectedAmount",
        "5435.789",
    )


def test_a_whole_number_with_a_fraction_is_rejected_not_rounded(con, delivery):
    set_cell(delivery / "loan_status.csv", 7, "currentDelinquencyStatus", "1.5")
    error = rejected(con, delivery)
    finding = next(f for f in error.findings if "not a whole number" in f.reason)
    assert (finding.row, finding.field, finding.value) == (7, "currentDelinquencyStatus", "1.5")


@pytest.mark.parametrize(
    "column, value, reason",
    [
        ("interestPaidThroughDate", "epoch", "not a valid date (YYYY-MM-DD)"),
        ("loanMaturityDate", "infinity", "not a valid date (YYYY-MM-DD)"),
        ("interestPaidThroughDate", "2015/10/13", "not a valid date (YYYY-MM-DD)"),
        ("interestPaidThroughDate", "2015-10-13 23:59:59+05", "not a valid date (YYYY-MM-DD)"),
        ("repossessedIndicator", "y", "not a valid boolean (true, false, 1 or 0)"),
        ("repossessedIndicator", "no", "not a valid boolean (true, false, 1 or 0)"),
    ],
)
def test_a_date_or_boolean_in_another_form_is_rejected_not_guessed(
    con, delivery, column, value, reason
):
    """DuckDB's cast reads these as 1970-01-01, 9999-12-31, the day, true and false."""
    set_cell(delivery / "loan_status.csv", 3, column, value)
    finding = next(f for f in rejected(con, delivery).findings if f.field == column)
    assert (finding.row, finding.reason, finding.value) == (3, reason, value)


def test_booleans_in_either_case_and_as_digits_are_accepted(con, delivery):
    path = delivery / "loan_status.csv"
    set_cell(path, 1, "repossessedIndicator", "FALSE")
    set_cell(path, 2, "repossessedIndicator", "0")
    load_period(con, delivery)
    values = con.execute(
        "select count(*) filter (where not repossessedIndicator) from raw.loan_status"
    ).fetchone()[0]
    assert values == con.execute("select count(*) from raw.loan_status").fetchone()[0]


@pytest.mark.parametrize(
    "value, reason",
    [
        ("0.0606007", "more than 6 decimals (never rounded)"),
        ("1e2", "not a valid decimal(8, 6)"),  # 100 fits the ten decimals read, not an APR
    ],
)
def test_a_rate_its_field_cannot_hold_is_rejected_not_rounded(tmp_path, small_deal, value, reason):
    schedule = tmp_path / "receivable_schedule.csv"
    shutil.copy(small_deal / DEAL_ID / "receivable_schedule.csv", schedule)
    set_cell(schedule, 2, "apr", value)
    connection = duckdb.connect(str(tmp_path / "rounded.duckdb"))
    load_deal_tables(connection, [load_deal()])
    with pytest.raises(IngestionError) as info:
        load_files(
            connection, DEAL_ID, "receivable_schedule", [(schemas.RECEIVABLE_SCHEDULE, schedule)]
        )
    finding = next(f for f in info.value.findings if f.field == "apr")
    assert (finding.row, finding.reason, finding.value) == (2, reason, value)


def test_a_whole_number_written_with_decimals_is_accepted(con, delivery):
    set_cell(delivery / "loan_status.csv", 7, "currentDelinquencyStatus", "0.00")
    load_period(con, delivery)


def test_a_byte_order_mark_before_the_header_is_accepted(con, delivery):
    path = delivery / "loan_status.csv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = load_period(con, delivery)
    assert result.changed and result.rows["loan_status"] > 0
    assert (
        con.execute("select count(*) from raw.loan_status where assetNumber is null").fetchone()[0]
        == 0
    )


def test_column_names_with_surrounding_spaces_say_so_once(con, delivery):
    path = delivery / "loan_status.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0].replace(",", ", ") + "".join(lines[1:]))
    (finding,) = rejected(con, delivery).findings
    assert finding.row is None
    assert "column names have surrounding spaces" in finding.reason
    assert "', '" in finding.reason  # names the separator it probably is


def _rows(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _write_rows(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _paid_off_row(folder: Path) -> dict:
    return next(r for r in _rows(folder / "loan_status.csv") if r["loanStatus"] == "paid_in_full")


def _carried_into(next_folder: Path, paid: dict, status: str) -> None:
    """The paid-off receivable `paid` appears again on the next tape with zero balances."""
    row = dict(paid)
    for column in row:
        if column.endswith("Amount") and row[column]:
            row[column] = "0.00"
    row.update(
        loanStatus=status,
        reportingPeriodBeginningDate=_rows(next_folder / "loan_status.csv")[0][
            "reportingPeriodBeginningDate"
        ],
        reportingPeriodEndingDate=_rows(next_folder / "loan_status.csv")[0][
            "reportingPeriodEndingDate"
        ],
    )
    path = next_folder / "loan_status.csv"
    _write_rows(path, [*_rows(path), row])


def test_a_paid_off_receivable_kept_on_later_tapes_is_not_an_error(con, delivery, next_delivery):
    """Real CarMax EX-102 filings keep paid-off receivables with zero balances and their
    zero-balance code: not a new payoff, not a finding."""
    load_period(con, delivery)
    _carried_into(next_delivery, _paid_off_row(delivery), "paid_in_full")
    result = load_period(con, next_delivery, key="2015-11")
    assert result.changed


def test_a_payment_booked_as_principal_on_a_charged_off_receivable_is_accepted(
    con, delivery, next_delivery
):
    """Art. I: what a Defaulted Receivable pays after its default is Liquidation Proceeds ("from
    whatever source"). A servicer that books it as principal on the charged-off row (nothing
    left to reduce) is not rejected; the models count it as Liquidation Proceeds
    (test_loan_level_reference::test_payments_after_a_default_are_liquidation_proceeds...)."""
    load_period(con, delivery)
    gone = _paid_off_row(delivery)
    _carried_into(next_delivery, gone, "charged_off")
    tape = next_delivery / "loan_status.csv"
    rows = _rows(tape)
    rows[-1].update(actualPrincipalCollectedAmount="100.00", totalActualAmountPaid="100.00")
    _write_rows(tape, rows)
    transactions = next_delivery / "payment_transactions.csv"
    paid = {**_rows(transactions)[0], "assetNumber": gone["assetNumber"],
            "transactionAmount": "100.00"}  # fmt: skip
    _write_rows(transactions, [*_rows(transactions), paid])
    result = load_period(con, next_delivery, key="2015-11")
    assert result.changed
    (principal,) = con.execute(
        'select "actualPrincipalCollectedAmount" from raw.loan_status '
        "where collection_period = '2015-11' and \"assetNumber\" = ?",
        [gone["assetNumber"]],
    ).fetchone()
    assert principal == Decimal("100.00")


def test_a_charged_off_receivable_that_comes_back_with_a_balance_is_flagged(
    con, delivery, next_delivery
):
    load_period(con, delivery)
    _carried_into(next_delivery, _paid_off_row(delivery), "charged_off")
    tape = next_delivery / "loan_status.csv"
    rows = _rows(tape)
    rows[-1].update(reportingPeriodActualEndBalanceAmount="250.00")
    _write_rows(tape, rows)
    error = rejected(con, next_delivery, key="2015-11")
    (finding,) = error.findings
    assert finding.field == "reportingPeriodActualEndBalanceAmount"
    assert "ending balance does not follow" in finding.reason


def test_a_paid_off_receivable_that_comes_back_current_is_flagged(con, delivery, next_delivery):
    load_period(con, delivery)
    paid = _paid_off_row(delivery)
    _carried_into(next_delivery, paid, "current")
    error = rejected(con, next_delivery, key="2015-11")
    (finding,) = [f for f in error.findings if f.field == "loanStatus"]
    assert "no balance reported as current" in finding.reason
    assert finding.row == len(_rows(next_delivery / "loan_status.csv"))


def test_a_restatement_that_breaks_the_next_loaded_period_is_rejected_naming_it(
    con, delivery, next_delivery
):
    load_period(con, delivery)
    load_period(con, next_delivery, key="2015-11")
    # a restated 2015-10 consistent in itself: one more dollar of principal collected
    rows = _rows(delivery / "loan_status.csv")
    row = next(r for r in rows if Decimal(r["reportingPeriodActualEndBalanceAmount"]) > 100)
    for column, change in (
        ("actualPrincipalCollectedAmount", 1),
        ("reportingPeriodActualEndBalanceAmount", -1),
    ):
        row[column] = f"{Decimal(row[column] or '0') + change:.2f}"
    _write_rows(delivery / "loan_status.csv", rows)
    total = "select sum(reportingPeriodActualEndBalanceAmount) from raw.loan_status"
    before = con.execute(total).fetchone()
    error = rejected(con, delivery)
    (finding,) = [f for f in error.findings if "2015-11" in f.reason]
    assert finding.field == "reportingPeriodActualEndBalanceAmount"
    assert finding.row == rows.index(row) + 1
    assert "restatement must agree with the periods after it" in finding.reason
    assert con.execute(total).fetchone() == before  # the good delivery stays loaded


def test_a_restatement_that_reopens_a_payoff_the_next_period_closed_is_rejected(
    con, delivery, next_delivery
):
    """A restated 2015-10 that makes a receivable paid off there outstanding again, consistent in
    itself: 2015-11, already loaded, has no such receivable; rejected naming it."""
    load_period(con, delivery)
    load_period(con, next_delivery, key="2015-11")
    rows = _rows(delivery / "loan_status.csv")
    row = next(
        r
        for r in rows
        if r["loanStatus"] == "paid_in_full"
        and Decimal(r["reportingPeriodBeginningLoanBalanceAmount"]) > 100
    )
    row["loanStatus"], row["zeroBalanceCode"] = "current", ""
    row["reportingPeriodActualEndBalanceAmount"] = row["reportingPeriodBeginningLoanBalanceAmount"]
    row["actualPrincipalCollectedAmount"] = "0.00"
    _write_rows(delivery / "loan_status.csv", rows)
    error = rejected(con, delivery)
    (finding,) = [f for f in error.findings if "missing from 2015-11" in f.reason]
    assert finding.field == "reportingPeriodActualEndBalanceAmount"
    assert finding.row == rows.index(row) + 1
    assert "restatement must agree with the periods after it" in finding.reason


def test_receivable_ids_swapped_between_two_rows_are_caught(con, delivery, next_delivery):
    """The totals are right; each receivable's own chain of balances is not."""
    load_period(con, delivery)
    path = next_delivery / "loan_status.csv"
    rows = _rows(path)
    outstanding = [
        i for i, r in enumerate(rows) if Decimal(r["reportingPeriodBeginningLoanBalanceAmount"]) > 0
    ]
    first = outstanding[0]
    second = next(
        i
        for i in outstanding
        if rows[i]["reportingPeriodBeginningLoanBalanceAmount"]
        != rows[first]["reportingPeriodBeginningLoanBalanceAmount"]
    )
    rows[first]["assetNumber"], rows[second]["assetNumber"] = (
        rows[second]["assetNumber"],
        rows[first]["assetNumber"],
    )
    _write_rows(path, rows)
    error = rejected(con, next_delivery, key="2015-11")
    broken = {f.row for f in error.findings if "not the ending balance of 2015-10" in f.reason}
    assert broken == {first + 1, second + 1}


def test_an_empty_tape_is_a_delivery_only_when_nothing_is_outstanding(con, delivery):
    path = delivery / "loan_status.csv"
    header = path.read_text().splitlines()[0]
    path.write_text(header + "\n")
    (finding,) = [f for f in rejected(con, delivery).findings if "header but no rows" in f.reason]
    assert "receivables were outstanding at the end of the Cutoff Date" in finding.reason


def test_an_empty_tape_is_accepted_once_no_receivable_is_outstanding(con, delivery, next_delivery):
    """Every receivable paid off in 2015-10 (a recovery may still come): 2015-11's tape has a
    header and no rows, and it is a delivery."""
    path = delivery / "loan_status.csv"
    rows = _rows(path)
    for row in rows:
        row.update(
            actualPrincipalCollectedAmount=row["reportingPeriodBeginningLoanBalanceAmount"],
            rebateAmount="0.00",
            chargedoffPrincipalAmount="0.00",
            reportingPeriodActualEndBalanceAmount="0.00",
            loanStatus="paid_in_full",
            currentDelinquencyStatus="0",
        )
    _write_rows(path, rows)
    load_period(con, delivery)
    empty = next_delivery / "loan_status.csv"
    empty.write_text(empty.read_text().splitlines()[0] + "\n")
    result = load_period(con, next_delivery, key="2015-11")
    assert result.changed and result.rows["loan_status"] == 0


def test_a_transactions_file_with_no_rows_while_the_tape_reports_payments(con, delivery):
    path = delivery / "payment_transactions.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    error = rejected(con, delivery)
    (finding,) = error.findings
    assert finding.file.endswith("payment_transactions.csv") and finding.row is None
    assert finding.reason.startswith("no payment transactions delivered")
    paying = sum(
        1 for r in _rows(delivery / "loan_status.csv") if Decimal(r["totalActualAmountPaid"]) > 0
    )
    assert f"the tape reports {paying} receivables paying" in finding.reason


def test_a_period_delivered_before_it_ends_is_rejected(con, delivery):
    """A clock that jumps, or a folder named for the wrong month: a tape is complete only once its
    Collection Period (2015-10-01 to 2015-10-31) has ended."""
    import datetime as dt

    (early,) = load_deliveries(con, [tape_delivery(delivery)], today=dt.date(2015, 10, 31))
    assert isinstance(early, IngestionError)
    (finding,) = [f for f in early.findings if "can only be complete" in f.reason]
    assert "ends on 2015-10-31 and today is 2015-10-31" in finding.reason
    assert finding.file.endswith("loan_status.csv")
    assert con.execute("select count(*) from raw.loan_status").fetchone()[0] == 0
    (loaded,) = load_deliveries(con, [tape_delivery(delivery)], today=dt.date(2015, 11, 1))
    assert loaded.changed


def test_a_file_of_many_bad_rows_is_quarantined_whole_and_reported_briefly(con, delivery):
    """Every row of a tape delivered three times over is a duplicate: all of them are
    quarantined with their records (in SQL), the error carries the first findings and the
    count (memory stays bounded for a tape of millions of rows)."""
    from dagster_project.ingestion.validation import FINDINGS_KEPT

    path = delivery / "loan_status.csv"
    header, *rows = path.read_text().splitlines(keepends=True)
    path.write_text(header + "".join(rows * 3))
    error = rejected(con, delivery)
    assert error.count == 3 * len(rows) > FINDINGS_KEPT
    assert len(error.findings) == FINDINGS_KEPT
    assert [f.row for f in error.findings] == list(range(1, FINDINGS_KEPT + 1))
    assert f"({error.count} findings;" in str(error)
    quarantined = con.execute(
        "select count(*), count(distinct row_number), count(record), "
        "min(row_number), max(row_number) from raw.quarantine where reason = 'duplicate row'"
    ).fetchone()
    assert quarantined == (3 * len(rows), 3 * len(rows), 3 * len(rows), 1, 3 * len(rows))
    (count,) = con.execute(
        "select finding_count from raw.deliveries where status = 'rejected'"
    ).fetchone()
    assert count == 3 * len(rows)


def test_rows_inserted_at_once_keep_every_value_and_type():
    """warehouse.insert_rows (the loads' and registers' inserts): exact decimals of any scale,
    NULLs, dates, timestamps, booleans and quotes come back as given; a row of the wrong width
    is an error, not a shifted row."""
    import datetime as dt

    from dagster_project.warehouse import insert_rows

    con = duckdb.connect()
    con.execute(
        "create table t (a varchar, b date, c decimal(18, 2), d decimal(24, 10), e boolean, "
        "f timestamptz, g bigint)"
    )
    at = dt.datetime(2021, 1, 18, 9, 30, tzinfo=dt.UTC)
    rows = [
        ("it's", dt.date(2020, 2, 29), Decimal("123456789012.34"), Decimal("0.1234567891"),
         True, at, 2**40),
        (None, None, None, None, None, None, None),
        ("b", dt.date(2021, 1, 1), Decimal("-0.01"), Decimal("7"), False, None, -1),
    ]  # fmt: skip
    insert_rows(con, "t", rows)
    assert con.execute("select * from t").fetchall() == rows
    with pytest.raises(ValueError):
        insert_rows(con, "t", [("too", "short")])
    with pytest.raises(TypeError, match="t.c: a float"):
        insert_rows(con, "t", [("x", None, 1.005, None, None, None, None)])
    insert_rows(con, "t", [])
    assert con.execute("select count(*) from t").fetchone() == (3,)


def test_a_small_pool_generated_for_a_large_deal_loads_its_schedule_and_tapes(tmp_path):
    """300 receivables carrying 2015-4's $1.05 billion pool are millions each (some over $10
    million): not absurd there, since the shelf's receivables are that large; on such a shelf an
    amount beyond twice the largest Amount Financed still is."""
    from dagster_project.generator.__main__ import generate_shelf

    generate_shelf(tmp_path / "in", [load_deal()], 300, seed=3, progress=False, as_of="2015-11")
    schedule = tmp_path / "in" / DEAL_ID / "receivable_schedule.csv"
    with schedule.open(newline="") as handle:
        largest = max(Decimal(row["amount_financed"]) for row in csv.DictReader(handle))
    assert largest > Decimal(schemas.MAX_AMOUNT)
    con = warehouse_with_schedule(tmp_path / "w.duckdb", tmp_path / "in")
    try:
        assert con.execute("select count(*) from raw.receivable_schedule").fetchone()[0] == 300
        folder = deliveries(tmp_path / "in") / PERIOD
        assert load_period(con, folder).rows["loan_status"] > 0
        november = tmp_path / "november"
        shutil.copytree(deliveries(tmp_path / "in") / "2015-11", november)
        set_cell(
            november / "loan_status.csv", 2, "actualPrincipalCollectedAmount", str(3 * largest)
        )
        error = rejected(con, november, "2015-11")
        assert any(
            f.field == "actualPrincipalCollectedAmount"
            and "absurd amount" in f.reason
            and f.row == 2
            for f in error.findings
        )
    finally:
        con.close()


def test_tapes_wait_for_a_rejected_receivable_schedule(tmp_path, small_deal):
    """A trust whose Receivable Schedule is rejected: its tapes are not checked against nothing
    (every receivable "not in the schedule", every valid row quarantined), they wait, unrecorded,
    for the run that loads a schedule."""
    from dagster_project.ingestion.loads import ensure_tables, load_once_delivered, load_tapes
    from dagster_project.quality.observations import SCHEDULE_REJECTED

    inputs = tmp_path / "in"
    shutil.copytree(small_deal, inputs)
    schedule = inputs / DEAL_ID / "receivable_schedule.csv"
    rewrite(schedule, lambda rows: rows.append(rows[1]))  # a duplicate receivable
    deal = load_deal()
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        load_deal_tables(con, [deal])
        ensure_tables(con)
        (error,) = load_once_delivered(con, inputs, [deal], schemas.RECEIVABLE_SCHEDULE).rejected
        assert "duplicate row" in str(error)
        said = []
        report = load_tapes(
            con,
            {DEAL_ID: deliveries(inputs)},
            {DEAL_ID: deal},
            [(DEAL_ID, PERIOD)],
            log=said.append,
        )
        assert report.waiting == [(DEAL_ID, PERIOD)] and not report.rejected
        assert said == [f"{DEAL_ID}: 1 period wait for its Receivable Schedule (none is loaded)"]
        assert (
            con.execute(
                "select count(*) from raw.quarantine where scope <> 'receivable_schedule'"
            ).fetchone()[0]
            == 0
        )
        assert (
            con.execute("select count(*) from raw.deliveries where scope = ?", [PERIOD]).fetchone()[
                0
            ]
            == 0
        )
        (rejected,) = con.execute(SCHEDULE_REJECTED).fetchall()  # the shelf's index says why
        assert rejected[0] == DEAL_ID and "duplicate row" in rejected[1]
        # the schedule corrected: the same tapes load
        rewrite(schedule, lambda rows: rows.pop())
        assert not load_once_delivered(con, inputs, [deal], schemas.RECEIVABLE_SCHEDULE).rejected
        again = load_tapes(
            con, {DEAL_ID: deliveries(inputs)}, {DEAL_ID: deal}, [(DEAL_ID, PERIOD)], log=None
        )
        assert again.loaded == [(DEAL_ID, PERIOD)] and not con.execute(SCHEDULE_REJECTED).fetchall()


@pytest.mark.parametrize("extra", ["loan_status.xml", "loan_status.parquet"])
def test_a_period_delivered_in_two_formats_is_rejected_naming_both(con, delivery, extra):
    """An EX-102 filing beside the CSV tape, or the tape as CSV and Parquet: which one the
    servicer meant is not guessed; the period is rejected naming the files, nothing loads."""
    from dagster_project.ingestion.loads import load_tapes

    if extra.endswith(".xml"):
        (delivery / extra).write_text(
            '<?xml version="1.0"?><assetData xmlns="http://www.sec.gov/edgar/document/absee/'
            'autoloan/assetdata"><assets><assetNumber>1</assetNumber></assets></assetData>'
        )
    else:
        _as_parquet(delivery / "loan_status.csv")
    folders = delivery.parent / "deliveries"
    folders.mkdir()
    delivery.rename(folders / PERIOD)
    report = load_tapes(con, {DEAL_ID: folders}, {DEAL_ID: load_deal()}, [(DEAL_ID, PERIOD)])
    (error,) = report.rejected
    assert "delivered twice, in different formats" in str(error) and extra in str(error)
    assert "loan_status.csv" in str(error)
    assert con.execute(
        "select status from raw.deliveries where scope = ?", [PERIOD]
    ).fetchall() == [("rejected",)]


def test_a_rejected_receivable_schedule_fails_the_run_s_deliveries_accepted_check(
    tmp_path, small_deal
):
    """The check the command line reads for its exit status 3 (launch.py): a rejected schedule
    fails it as a rejected tape does, naming the trust."""
    import dagster as dg

    from dagster_project.defs.ingestion import receivable_schedule
    from dagster_project.resources import WarehouseResource

    inputs = tmp_path / "in"
    shutil.copytree(small_deal, inputs, ignore=shutil.ignore_patterns("deliveries"))
    schedule = inputs / DEAL_ID / "receivable_schedule.csv"
    rewrite(schedule, lambda rows: rows.append(rows[1]))
    work = tmp_path / "work.duckdb"
    with duckdb.connect(str(work)) as con:
        load_deal_tables(con, [load_deal()])
    warehouse = WarehouseResource(
        work_path=str(work), published_path=str(tmp_path / "published.duckdb"),
        input_dir=str(inputs),
    )  # fmt: skip
    result = dg.materialize([receivable_schedule], resources={"warehouse": warehouse})
    (check,) = result.get_asset_check_evaluations()
    assert check.check_name == "deliveries_accepted" and not check.passed
    assert check.metadata["rejected"].value == f"{DEAL_ID} receivable_schedule"


def test_a_trust_with_no_floating_class_needs_no_index_rates(tmp_path):
    """2012-3's notes are all fixed-rate: no index_rates.csv is asked of it (no rejection, no
    status 3), while 2015-4, whose A-2b floats, must deliver one."""
    from dagster_project.deal import PROJECT_ROOT
    from dagster_project.ingestion.loads import load_once_delivered

    fixed = load_deal(PROJECT_ROOT / "data" / "deals" / "caot_2012_3.yaml")
    floating = load_deal()
    for deal in (fixed, floating):
        (tmp_path / "in" / deal.deal_id).mkdir(parents=True)
    with duckdb.connect() as con:
        report = load_once_delivered(con, tmp_path / "in", [fixed, floating], schemas.INDEX_RATES)
    assert [error.deal_id for error in report.rejected] == [floating.deal_id]
    assert "index_rates.csv" in str(report.rejected[0])


def test_a_pass_takes_the_deliveries_that_fit_in_its_megabytes(tmp_path, monkeypatch):
    from dagster_project.ingestion import loads

    def delivery(scope: str, megabytes: int, kinds=schemas.TAPE_SCHEMAS) -> Delivery:
        files = []
        for schema in kinds:
            path = tmp_path / scope / f"{schema.kind}.csv"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(b"x" * (megabytes * 2**20 // len(kinds)))
            files.append((schema, path))
        return Delivery(DEAL_ID, scope, files)

    monkeypatch.setenv("CAOT_LOAD_MB", "5")
    pending = [delivery("2015-10", 3), delivery("2015-11", 2), delivery("2015-12", 1)]
    assert [d.scope for d in loads._next_pass(pending)] == ["2015-10", "2015-11"]
    # the first delivery is taken whatever its size; one of other file kinds starts a pass
    big = [delivery("2016-01", 9), delivery("2016-02", 1)]
    assert [d.scope for d in loads._next_pass(big)] == ["2016-01"]
    mixed = [delivery("2016-03", 1), delivery("2016-04", 1, (schemas.LOAN_STATUS,))]
    assert [d.scope for d in loads._next_pass(mixed)] == ["2016-03"]
    monkeypatch.setenv("CAOT_LOAD_MB", "256")
    assert len(loads._next_pass(pending)) == 3


def test_a_schedule_delivered_other_than_the_one_loaded_holds_its_trust_until_they_agree(
    con, tmp_path, small_deal
):
    """Re-delivered with changes (for the full rebuild) or rejected (the loaded one stands): the
    trust is held with the reason, which the certificate gate gives for each of its certificates
    (quality/runs.py trust_holds); the same file as loaded lifts the hold."""
    from dagster_project.quality.runs import trust_holds

    deal, now = load_deal(), dt.datetime.now(dt.UTC)
    loaded = small_deal / DEAL_ID / "receivable_schedule.csv"
    delivered = tmp_path / "inputs" / DEAL_ID / "receivable_schedule.csv"
    delivered.parent.mkdir(parents=True)
    shutil.copy(loaded, delivered)
    assert hold_schedules(con, delivered.parents[1], [deal], now) == {}

    set_cell(delivered, 3, "scheduled_payment", "1.00")
    assert not rejected_schedule(delivered.parents[1], deal, [deal])  # loads: for the rebuild
    (why,) = hold_schedules(con, delivered.parents[1], [deal], now).values()
    assert "differs from the one loaded" in why and "--rebuild" in why

    data = loaded.read_bytes()
    delivered.write_bytes(data[: len(data) // 2])  # cut off mid-row
    # known without loading it (a monthly run then loads it, so rejected and recorded)
    schedule = con.execute("select * from raw.receivable_schedule order by all").fetchall()
    assert rejected_schedule(delivered.parents[1], deal, [deal])
    assert con.execute("select * from raw.receivable_schedule order by all").fetchall() == schedule
    with pytest.raises(IngestionError):
        load_files(con, DEAL_ID, "receivable_schedule", [(schemas.RECEIVABLE_SCHEDULE, delivered)])
    (why,) = hold_schedules(con, delivered.parents[1], [deal], now).values()
    assert why.startswith(f"the file delivered was rejected: {delivered}, row ")
    assert trust_holds(con)[DEAL_ID] == [f"the Receivable Schedule delivered is held: {why}"]

    shutil.copy(loaded, delivered)
    assert hold_schedules(con, delivered.parents[1], [deal], now) == {}
    assert DEAL_ID not in trust_holds(con)
