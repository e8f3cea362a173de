"""Faults a real servicer's feed and machine produce: a full disk, an unwritable folder, a run
killed mid-stage, periods missing or late, restatements good and bad. Nothing is lost, nothing is
published wrong, and the run says why."""

import csv
import errno
import os
import re
import shutil
import signal
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from pipeline_process import differences_from_a_full_build, pipeline_env, query, run, start

from dagster_project import warehouse as warehouse_files
from dagster_project.quality.checks import PERIOD_CHECK, TAPE
from dagster_project.warehouse import PublishError, publish, publish_folder

PERIODS = 12  # the first year of the small deal keeps these runs short


# --- publishing -------------------------------------------------------------------------------


def _work(tmp_path: Path, rows: int) -> Path:
    """The working file with `rows` rows, written as the pipeline writes it: after the background
    copy a publication left running (a raw connection raced it: the copy of the previous
    publication could land over these rows, and the test then failed now and then)."""
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


def test_publishing_moves_the_working_file_and_restores_it_as_a_copy(tmp_path):
    published = tmp_path / "published" / "warehouse.duckdb"
    publish(_work(tmp_path, 10), published)
    work = _work(tmp_path, 20)
    publish(work, published)
    assert _rows(published) == 20
    warehouse_files.finish_restoring(work)
    assert _rows(work) == 20 and work.read_bytes() == published.read_bytes()
    assert not work.samefile(published)  # the next run's writes do not reach readers
    assert sorted(p.name for p in published.parent.iterdir()) == ["warehouse.duckdb"]


def _full_disk(source, target):
    Path(target).write_bytes(Path(source).read_bytes()[:4096])
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_while_restoring_the_working_file_is_repaired_by_the_next_run(
    tmp_path, monkeypatch, capsys
):
    published = tmp_path / "published" / "warehouse.duckdb"
    work = _work(tmp_path, 20)
    with monkeypatch.context() as patched:
        patched.setattr(warehouse_files.shutil, "copyfile", _full_disk)
        publish(work, published)
        warehouse_files.finish_restoring(work)
    assert _rows(published) == 20  # published whole
    assert "could not restore the working warehouse" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["published"]  # no partial copy
    warehouse_files.restore_work(work, published)  # what the next run does first
    assert _rows(work) == 20


def test_a_full_disk_while_publishing_to_another_filesystem_leaves_the_published_warehouse(
    tmp_path, monkeypatch
):
    published = tmp_path / "published" / "warehouse.duckdb"
    publish(_work(tmp_path, 10), published)
    warehouse_files.finish_restoring()
    before = published.read_bytes()
    work = _work(tmp_path, 20)
    rename = os.replace

    def across_filesystems(source, target):
        if Path(source) == work:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        rename(source, target)

    monkeypatch.setattr(warehouse_files.os, "replace", across_filesystems)
    monkeypatch.setattr(warehouse_files.shutil, "copyfile", _full_disk)
    with pytest.raises(PublishError, match="No space left on device.*unchanged"):
        publish(work, published)
    assert published.read_bytes() == before
    assert list(published.parent.iterdir()) == [published]  # no partial copy left behind
    assert _rows(work) == 20  # the finished work is still there for the next try


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
    periods = sorted(p.name for p in (small_deal / "deliveries").iterdir())[:PERIODS]
    for period in periods:
        shutil.copytree(small_deal / "deliveries" / period, folder / "deliveries" / period)
    return folder


def delivered(inputs: Path) -> list[str]:
    return sorted(p.name for p in (inputs / "deliveries").iterdir())


def assert_consistent(folder: Path, inputs: Path) -> None:
    """Every delivered period loaded once and whole; the gate lets every certificate out."""
    published = folder / "warehouse.duckdb"
    for period in delivered(inputs):
        with (inputs / "deliveries" / period / "loan_status.csv").open() as handle:
            expected = sum(1 for _ in csv.DictReader(handle))
        rows = query(
            published,
            'select count(*), count(distinct "assetNumber") from raw.loan_status where scope = ?',
            [period],
        )
        assert rows == [(expected, expected)], period
    loaded = query(
        published,
        "select scope, file_kind, count(*) from raw.deliveries where status = 'loaded' "
        "and scope <> 'schedule' group by all having count(*) <> 1",
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
        ("ingestion", "[6/12] 2015-10..2016-03"),
        ("dbt build", "START sql table model marts."),
    ],
)
def test_a_run_killed_mid_stage_is_completed_by_the_next_run(inputs, tmp_path, stage, marker):
    env = pipeline_env(inputs, tmp_path)
    kill_when(start(env), marker)
    work = tmp_path / "work" / "warehouse.duckdb"
    if stage == "ingestion":  # killed between periods: some loaded whole, none half-loaded
        scopes = query(
            work,
            "select scope, count(*) from raw.loan_status where scope <> 'schedule' group by 1",
        )
        assert 0 < len(scopes) < PERIODS
        for scope, rows in scopes:
            with (inputs / "deliveries" / scope / "loan_status.csv").open() as handle:
                assert rows == sum(1 for _ in csv.DictReader(handle)), scope
    assert not (tmp_path / "warehouse.duckdb").exists()  # nothing was published
    result = run(env)
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


def period_checks(folder: Path) -> dict[str, str]:
    """The latest result of the per-period servicing check of each partition, as the UI shows it."""
    instance = dg.DagsterInstance.from_config(str(folder / "dagster_home"))
    try:
        infos = instance.event_log_storage.get_asset_check_partition_info(
            [dg.AssetCheckKey(TAPE, PERIOD_CHECK)]
        )
        return {i.partition_key: i.latest_execution_status.value for i in infos}
    finally:
        instance.dispose()


def distribution_date(folder: Path, period: str):
    return query(
        folder / "warehouse.duckdb",
        "select distribution_date from staging.stg_deal__payment_calendar "
        "where collection_period = ?",
        [period],
    )[0][0]


@pytest.mark.slow
def test_missing_late_restated_and_bad_periods(inputs, tmp_path):
    env = pipeline_env(inputs, tmp_path)
    periods = delivered(inputs)
    late = periods[8]
    held = tmp_path / "held_back"
    shutil.move(inputs / "deliveries" / late, held)

    # 1. a period missing: the ones after it are withheld, the ones before publish
    first = run(env)
    assert first.returncode == 0, first.stderr[-3000:]
    status = gate(tmp_path)
    assert [status[p] for p in periods[:8]] == [True] * 8
    assert [status[p] for p in periods[9:]] == [False] * 3
    assert "WITHHELD" in first.stderr and "1122(d)(1)(v)" in first.stderr
    reports = tmp_path / "reports"
    after_gap = distribution_date(tmp_path, periods[9])
    assert "Withheld" in (reports / "certificates" / f"certificate_{after_gap}.html").read_text()
    checks = period_checks(tmp_path)  # per partition in the Dagster UI
    assert [checks[p] for p in periods[:8]] == ["SUCCEEDED"] * 8
    assert late not in checks and [checks[p] for p in periods[9:]] == ["FAILED"] * 3

    # 2. it arrives late: everything publishes, version 1 of every certificate
    shutil.move(held, inputs / "deliveries" / late)
    second = run(env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert_consistent(tmp_path, inputs)
    versions = query(
        tmp_path / "warehouse.duckdb",
        "select distribution_date, max(version) from history.certificate_versions group by 1",
    )
    assert len(versions) == PERIODS and {v for _d, v in versions} == {1}
    # built incrementally from the late period on: the same rows as a build from scratch
    work = tmp_path / "work" / "warehouse.duckdb"
    assert "from " + late + " recomputed" in second.stdout + second.stderr
    # one period to load: its tape and the build in one Dagster run, as the monthly job does
    assert f"[1/1] monthly tape {late}, dbt build and publish" in second.stdout
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}
    assert period_checks(tmp_path) == {p: "SUCCEEDED" for p in periods}

    # 3. a restatement of a closed period: a new version, with what changed, the old one kept
    restated = periods[2]
    set_delinquency(inputs / "deliveries" / restated / "loan_status.csv", 45)
    third = run(env)
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
    assert "from " + restated + " recomputed" in third.stdout + third.stderr
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}

    # 3b. a restated market input (one LIBOR fixing): only the models downstream of it rebuild,
    # the floating class's interest follows, and the warehouse equals a build from scratch
    # (the last period: the certificates before it stay as they are for the steps below)
    libor_date = distribution_date(tmp_path, periods[-1])
    floating_interest = (
        "select monthly_interest_amount from marts.fct_note_distribution "
        "where class_id = 'A-2b' and distribution_date = ?"
    )
    before = query(work, floating_interest, [libor_date])
    libor = inputs / "libor_rates.csv"
    rows = libor.read_text().splitlines()
    rows = [r.rsplit(",", 1)[0] + ",0.0123456" if f",{libor_date}," in r else r for r in rows]
    libor.write_text("\n".join(rows) + "\n")
    market = run(env)
    assert market.returncode == 0, market.stderr[-3000:]
    printed = market.stdout + market.stderr
    built, of = map(int, re.search(r"dbt: (\d+) of (\d+) models to rebuild", printed).groups())
    assert 0 < built < of
    assert query(work, floating_interest, [libor_date]) != before
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}

    # 4. a restatement whose balances do not follow the Simple Interest Method (a payment the
    # servicer's balances do not reflect): withheld from that period on, the last published
    # versions stand, the run says why
    bad = periods[5]
    shift_a_payment(inputs / "deliveries" / bad / "payment_transactions.csv", "0.50")
    fourth = run(env)
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

    # 5. a restatement that cannot be read: the run fails, names the file, publishes nothing
    before = (tmp_path / "warehouse.duckdb").read_bytes()
    broken = inputs / "deliveries" / periods[7] / "loan_status.csv"
    broken.write_bytes(broken.read_bytes()[: broken.stat().st_size // 2])
    fifth = run(env)
    assert fifth.returncode == 1
    assert "rejected" in fifth.stdout + fifth.stderr and str(broken) in fifth.stdout + fifth.stderr
    assert (tmp_path / "warehouse.duckdb").read_bytes() == before
