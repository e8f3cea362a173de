"""Faults a real servicer's feed and machine produce: a full disk, an unwritable folder, a run
killed mid-stage, periods missing or late, restatements good and bad. Nothing is lost, nothing is
published wrong, and the run says why."""

import csv
import errno
import os
import shutil
import signal
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from conftest import DEAL_ID, deliveries
from pipeline_process import differences_from_a_full_build, pipeline_env, query, run_here, start

from dagster_project import warehouse as warehouse_files
from dagster_project.warehouse import PublishError, publish, publish_folder

PERIODS = 12  # the first year of the small deal keeps these runs short


# --- publishing -------------------------------------------------------------------------------


def _work(tmp_path: Path, rows: int) -> Path:
    work = tmp_path / "work.duckdb"
    with warehouse_files.connect(work) as con:
        con.execute("create or replace table t as select range as x from range(?)", [rows])
    return work


def _rows(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("select count(*) from t").fetchone()[0]
    finally:
        con.close()


def test_publishing_copies_the_working_file_over_the_published_one(tmp_path):
    published = tmp_path / "published" / "warehouse.duckdb"
    publish(_work(tmp_path, 10), published)
    work = _work(tmp_path, 20)
    publish(work, published)
    assert _rows(published) == 20 and _rows(work) == 20
    assert not work.samefile(published)  # the next run's writes do not reach readers
    assert sorted(p.name for p in published.parent.iterdir()) == ["warehouse.duckdb"]


def _full_disk(source, target):
    Path(target).write_bytes(Path(source).read_bytes()[:4096])
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_while_publishing_leaves_the_published_warehouse(tmp_path, monkeypatch):
    published = tmp_path / "published" / "warehouse.duckdb"
    publish(_work(tmp_path, 10), published)
    before = published.read_bytes()
    work = _work(tmp_path, 20)
    monkeypatch.setattr(warehouse_files.shutil, "copyfile", _full_disk)
    with pytest.raises(PublishError, match="no space left on the device.*unchanged"):
        publish(work, published)
    assert published.read_bytes() == before
    assert list(published.parent.iterdir()) == [published]  # no partial copy left behind
    assert _rows(work) == 20  # the finished work is still there for the next try


def test_a_missing_working_file_is_restored_from_the_published_one(tmp_path):
    published = tmp_path / "published" / "warehouse.duckdb"
    publish(_work(tmp_path, 10), published)
    work = tmp_path / "work" / "warehouse.duckdb"
    warehouse_files.restore_work(work, published)  # what a run does first
    assert _rows(work) == 10


def test_an_unwritable_output_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the output folder should be")
    with pytest.raises(PublishError, match="could not publish the warehouse to .*not_a_folder"):
        publish(_work(tmp_path, 5), blocker / "warehouse.duckdb")
    with pytest.raises(PublishError, match="could not publish .*reports"):
        publish_folder(lambda folder: folder.mkdir(), blocker / "reports")


def test_reports_that_fail_halfway_leave_the_previous_reports(tmp_path):
    target = tmp_path / "reports"
    publish_folder(lambda f: (f.mkdir(), (f / "index.html").write_text("v1")), target)

    def half(folder):
        folder.mkdir()
        (folder / "index.html").write_text("v2, half written")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(PublishError, match="previous version stands"):
        publish_folder(half, target)
    assert (target / "index.html").read_text() == "v1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reports"]


# --- runs on a deal of their own ------------------------------------------------------------


@pytest.fixture
def inputs(small_deal, tmp_path) -> Path:
    """The small deal's first year of deliveries."""
    folder = tmp_path / "inputs"
    shutil.copytree(small_deal, folder, ignore=shutil.ignore_patterns("deliveries"))
    periods = sorted(p.name for p in deliveries(small_deal).iterdir())[:PERIODS]
    for period in periods:
        shutil.copytree(deliveries(small_deal) / period, deliveries(folder) / period)
    return folder


def delivered(inputs: Path) -> list[str]:
    return sorted(p.name for p in deliveries(inputs).iterdir())


def assert_consistent(folder: Path, inputs: Path) -> None:
    """Every delivered period loaded once and whole; the gate lets every certificate out."""
    published = folder / "warehouse.duckdb"
    for period in delivered(inputs):
        with (deliveries(inputs) / period / "loan_status.csv").open() as handle:
            expected = sum(1 for _ in csv.DictReader(handle))
        rows = query(
            published,
            'select count(*), count(distinct "assetNumber") from raw.loan_status '
            "where collection_period = ?",
            [period],
        )
        assert rows == [(expected, expected)], period
    loaded = query(
        published,
        "select deal_id, scope, file_kind, count(*) from raw.deliveries where status = 'loaded' "
        "group by all having count(*) <> 1",
    )
    assert loaded == []
    assert query(published, "select count(*) from quality.certificate_gate") == [(PERIODS,)]
    assert query(published, "select bool_and(is_publishable) from quality.certificate_gate") == [
        (True,)
    ]


def kill_when(process, marker: str) -> str:
    """Read the run's output until `marker`, then kill the run and everything it started."""
    seen = []
    for line in process.stdout:
        seen.append(line)
        if marker in line:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return "".join(seen)
    raise AssertionError(f"the run ended before {marker!r}:\n{''.join(seen)[-3000:]}")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stage", "marker"),
    [
        ("ingestion", "caot-2015-4 2015-10..2016-03: 6 loaded"),
        ("dbt build", "START sql table model marts."),
    ],
)
def test_a_run_killed_mid_stage_is_completed_by_the_next_run(inputs, tmp_path, stage, marker):
    env = pipeline_env(inputs, tmp_path)
    kill_when(start(env), marker)
    work = tmp_path / "work" / "warehouse.duckdb"
    if stage == "ingestion":  # killed between periods: some loaded whole, none half-loaded
        scopes = query(work, "select collection_period, count(*) from raw.loan_status group by 1")
        assert 0 < len(scopes) < PERIODS
        for scope, rows in scopes:
            with (deliveries(inputs) / scope / "loan_status.csv").open() as handle:
                assert rows == sum(1 for _ in csv.DictReader(handle)), scope
    assert not (tmp_path / "warehouse.duckdb").exists()  # nothing was published
    result = run_here(env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert_consistent(tmp_path, inputs)


def set_delinquency(path: Path, days: int) -> str:
    """Make one current, outstanding receivable `days` past due (nothing else changes)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    row = next(
        r
        for r in rows
        if r["loanStatus"] == "current"
        and r["currentDelinquencyStatus"] == "0"
        and float(r["reportingPeriodActualEndBalanceAmount"]) > 5000
    )
    row["currentDelinquencyStatus"] = str(days)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return row["assetNumber"]


def shift_a_payment(path: Path, amount: str) -> str:
    """Add `amount` to one obligor payment (the tape's reported balances stay as they were)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    row = next(r for r in rows if r["transactionType"] == "payment")
    row["transactionAmount"] = str(Decimal(row["transactionAmount"]) + Decimal(amount))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return row["assetNumber"]


def gate(folder: Path) -> dict:
    return dict(
        query(
            folder / "warehouse.duckdb",
            "select collection_period, is_publishable from quality.certificate_gate",
        )
    )


def distribution_date(folder: Path, period: str):
    return query(
        folder / "warehouse.duckdb",
        "select distribution_date from staging.stg_deal__payment_calendar "
        "where deal_id = ? and collection_period = ?",
        [DEAL_ID, period],
    )[0][0]


@pytest.mark.slow
def test_missing_late_restated_and_bad_periods(inputs, tmp_path):
    env = pipeline_env(inputs, tmp_path)
    periods = delivered(inputs)
    late = periods[8]
    held = tmp_path / "held_back"
    shutil.move(deliveries(inputs) / late, held)

    # 1. a period missing: the ones after it are withheld, the ones before publish
    first = run_here(env)
    assert first.returncode == 0, first.stderr[-3000:]
    status = gate(tmp_path)
    assert [status[p] for p in periods[:8]] == [True] * 8
    assert [status[p] for p in periods[9:]] == [False] * 3
    assert "WITHHELD" in first.stderr and f"no tape delivered for {late}" in first.stderr
    reports = tmp_path / "reports" / DEAL_ID
    after_gap = distribution_date(tmp_path, periods[9])
    assert "Withheld" in (reports / "certificates" / f"certificate_{after_gap}.html").read_text()

    # 2. it arrives late and runs alone (its partition, as the sensor launches it): everything
    # publishes, version 1 of every certificate, built incrementally from the late period on
    shutil.move(held, deliveries(inputs) / late)
    second = run_here(env, "--period", late)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f'"rebuild_from": {{"{DEAL_ID}": "{late}"}}' in second.stdout + second.stderr
    assert_consistent(tmp_path, inputs)
    versions = query(
        tmp_path / "warehouse.duckdb",
        "select distribution_date, max(version) from history.certificate_versions group by 1",
    )
    assert len(versions) == PERIODS and {v for _d, v in versions} == {1}
    work = tmp_path / "work" / "warehouse.duckdb"
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}

    # 3. a restatement of a closed period: a new version, with what changed, the old one kept
    restated = periods[2]
    set_delinquency(deliveries(inputs) / restated / "loan_status.csv", 45)
    third = run_here(env, "--period", restated)
    assert third.returncode == 0, third.stderr[-3000:]
    date = distribution_date(tmp_path, restated)
    versions = dict(
        query(
            tmp_path / "warehouse.duckdb",
            "select distribution_date, max(version) from history.certificate_versions group by 1",
        )
    )
    assert versions[date] == 2 and sum(v for v in versions.values()) == PERIODS + 1
    page = (reports / "certificates" / f"certificate_{date}.html").read_text()
    assert "restated" in page and "78a_count" in page
    assert (reports / "certificates" / "versions" / f"certificate_{date}_v1.pdf").exists()
    superseded = query(
        tmp_path / "warehouse.duckdb",
        "select count(*) from raw.deliveries where scope = ? and status = 'superseded'",
        [restated],
    )
    assert superseded == [(1,)]  # the earlier delivery stays, with its hash and load time
    # (its periods are compared with a build from scratch after step 4, which recomputes only
    # from a later period)

    # 3b. a restated market input (the floating index of the last period): the floating class's
    # interest follows, and the warehouse equals a build from scratch
    rate_date = distribution_date(tmp_path, periods[-1])
    floating_interest = (
        "select monthly_interest_amount from marts.fct_note_distribution "
        "where class_id = 'A-2b' and distribution_date = ?"
    )
    before = query(work, floating_interest, [rate_date])
    rates = inputs / DEAL_ID / "index_rates.csv"
    rows = rates.read_text().splitlines()
    rows = [r.rsplit(",", 1)[0] + ",0.0123456" if f",{rate_date}," in r else r for r in rows]
    rates.write_text("\n".join(rows) + "\n")
    market = run_here(env, "--period", periods[-1])
    assert market.returncode == 0, market.stderr[-3000:]
    assert query(work, floating_interest, [rate_date]) != before
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}

    # 4. a restatement whose balances do not follow the Simple Interest Method (a payment the
    # servicer's balances do not reflect): withheld from that period on, the last published
    # versions stand, the run says why
    bad = periods[5]
    shift_a_payment(deliveries(inputs) / bad / "payment_transactions.csv", "0.50")
    fourth = run_here(env, "--period", bad)
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    status = gate(tmp_path)
    assert [status[p] for p in periods] == [True] * 5 + [False] * (PERIODS - 5)
    assert "WITHHELD" in fourth.stderr and "1122(d)(4)(v)" in fourth.stderr
    date = distribution_date(tmp_path, bad)
    page = (reports / "certificates" / f"certificate_{date}.html").read_text()
    assert "Withheld" in page and "version 1" in page
    assert (reports / "certificates" / "versions" / f"certificate_{date}_v1.html").exists()
    versions = dict(
        query(
            tmp_path / "warehouse.duckdb",
            "select distribution_date, max(version) from history.certificate_versions group by 1",
        )
    )
    assert versions[date] == 1  # nothing withheld becomes a version
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}

    # 5. a restatement that cannot be read: rejected, named with its file, row and field, and
    # recorded in the published warehouse; the delivery loaded before stands, so does every
    # certificate
    before = query(
        tmp_path / "warehouse.duckdb", "select * from quality.certificate_gate order by all"
    )
    broken = deliveries(inputs) / periods[7] / "loan_status.csv"
    broken.write_bytes(broken.read_bytes()[: broken.stat().st_size // 2])
    fifth = run_here(env, "--period", periods[7])
    printed = fifth.stdout + fifth.stderr
    assert fifth.returncode == 3, printed[-3000:]  # published, with a rejected delivery
    assert "rejected" in printed and str(broken) in printed and "row " in printed
    rejected = query(
        tmp_path / "warehouse.duckdb",
        "select scope, status from raw.deliveries where status = 'rejected'",
    )
    assert rejected == [(periods[7], "rejected")]
    assert [
        g[:4]
        for g in query(
            tmp_path / "warehouse.duckdb", "select * from quality.certificate_gate order by all"
        )
    ] == [g[:4] for g in before]


def test_a_warehouse_of_an_earlier_layout_is_a_clear_error_and_left_as_it_was(inputs, tmp_path):
    env = pipeline_env(inputs, tmp_path)
    work = tmp_path / "work" / "warehouse.duckdb"
    work.parent.mkdir(parents=True)
    with warehouse_files.connect(work) as con:  # raw tables keyed by period only, no trust
        con.execute("create schema raw")
        con.execute(
            "create table raw.deliveries (delivery_id varchar, file_kind varchar, scope varchar, "
            "file_path varchar, sha256 varchar, row_count bigint, status varchar)"
        )
        con.execute("insert into raw.deliveries values ('d1', 'loan_status', '2015-10', 'x', "
                    "'abc', 5, 'loaded')")  # fmt: skip
    result = run_here(env, "--period", "2015-10")
    printed = result.stdout + result.stderr
    assert result.returncode == 1, printed[-3000:]
    assert "raw.deliveries in the warehouse has other columns than this version writes" in printed
    assert "missing: deal_id" in printed and "Move the warehouse files aside" in printed
    assert query(work, "select count(*) from raw.deliveries") == [(1,)]
    assert not (tmp_path / "warehouse.duckdb").exists()  # nothing published


def test_a_first_run_without_the_first_period_withholds_everything_and_says_why(inputs, tmp_path):
    env = pipeline_env(inputs, tmp_path)
    later = delivered(inputs)[3]
    result = run_here(env, "--period", later)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"no tape delivered for {delivered(inputs)[0]}" in result.stderr
    assert query(
        tmp_path / "warehouse.duckdb",
        "select bool_or(is_publishable) from quality.certificate_gate",
    ) == [(False,)]
    performance = tmp_path / "reports" / DEAL_ID / "performance.html"
    assert "none computed yet" in performance.read_text()
