"""Faults of the machine and of the warehouse file: a full disk, an unwritable folder, a run
killed mid-stage, a warehouse of an earlier version. Nothing is lost, nothing is published wrong,
and the run says why."""

import csv
import errno
import os
import shutil
import signal
import time
from pathlib import Path

import duckdb
import pytest
from conftest import copied_warehouse, deliveries
from conftest import pipeline_env as pipeline_env_of
from first_year import PERIODS, assert_consistent
from pipeline_process import pipeline_env, query, run_here, start

from dagster_project import warehouse as warehouse_files
from dagster_project.warehouse import PublishError, publish, publish_folder

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


def test_reports_failing_while_the_warehouse_is_copied_leave_the_published_warehouse(tmp_path):
    published = tmp_path / "published" / "warehouse.duckdb"
    publish(_work(tmp_path, 10), published)
    before = published.read_bytes()
    with (
        pytest.raises(RuntimeError, match="rendering failed"),
        warehouse_files.publishing(_work(tmp_path, 20), published),
    ):
        raise RuntimeError("rendering failed")
    assert published.read_bytes() == before
    assert list(published.parent.iterdir()) == [published]  # the copy aside is gone
    with warehouse_files.publishing(_work(tmp_path, 30), published):
        assert _rows(published) == 10  # readers see the old file until the block is done
    assert _rows(published) == 30


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
        ("ingestion", " loaded, 0 unchanged, 0 rejected"),  # a pass ended (CAOT_LOAD_MB below)
        ("dbt build", "START sql table model marts."),
    ],
)
def test_a_run_killed_mid_stage_is_completed_by_the_next_run(inputs, tmp_path, stage, marker):
    # passes of about five of this small trust's periods, so that the run is killed between two
    env = {**pipeline_env(inputs, tmp_path), "CAOT_LOAD_MB": "1"}
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


def _session_alive(session: int) -> list[str]:
    """The processes of `session` still running (a zombie, dead but not yet reaped by the
    machine's init, is not running)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, session_id = fields[0], int(fields[3])
        if session_id == session and state != "Z":
            alive.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return alive


@pytest.mark.slow
def test_sigterm_stops_the_run_and_everything_it_started(inputs, tmp_path):
    """The scheduler's stop (SIGTERM to the run's process only), while dbt builds: the run ends
    as failed, no process it started (dbt, its helpers) outlives it, and nothing is published
    half-made (a failure while rendering: test_a_failure_while_rendering_...; that the next run
    completes what a killed one left: test_a_run_killed_mid_stage_...)."""
    marker = "START sql table model marts."
    for later in sorted(deliveries(inputs).iterdir())[1:]:  # one period is enough here
        shutil.rmtree(later)
    env = pipeline_env(inputs, tmp_path)
    process = start(env)
    seen = []
    for line in process.stdout:
        seen.append(line)
        if marker in line:
            process.send_signal(signal.SIGTERM)
            break
    else:
        raise AssertionError(f"the run ended before {marker!r}:\n{''.join(seen)[-3000:]}")
    rest = process.communicate(timeout=120)[0]
    assert process.returncode == 1, rest[-3000:]
    assert "FAILED" in rest
    deadline = time.monotonic() + 10  # a process that is exiting has a few seconds
    while _session_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _session_alive(process.pid) == []
    assert not (tmp_path / "warehouse.duckdb").exists()  # nothing was published
    assert not (tmp_path / "reports").exists()


def test_a_failure_while_rendering_publishes_neither_the_warehouse_nor_the_reports(
    built_warehouse, tmp_path, monkeypatch
):
    """The reports are rendered before anything is published: when rendering fails, the
    published warehouse and reports stay those of the previous run, together (the publication
    step alone, on a copy of the built warehouse with a change to publish)."""
    import dagster as dg

    from dagster_project.defs import publishing
    from dagster_project.resources import WarehouseResource

    paths = copied_warehouse(built_warehouse, tmp_path)
    for name, value in pipeline_env_of(paths).items():
        monkeypatch.setenv(name, value)
    published = paths["published"].read_bytes()
    index = (paths["reports"] / "index.html").read_text()
    with duckdb.connect(str(paths["work"])) as con:  # what the failed run would publish
        con.execute("create table marts.changed_in_this_run as select 1 as x")

    def fails(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(publishing, "write_reports", fails)
    warehouse = WarehouseResource(
        work_path=str(paths["work"]),
        published_path=str(paths["published"]),
        input_dir=str(paths["input"]),
    )
    result = dg.materialize(
        [publishing.publication], resources={"warehouse": warehouse}, raise_on_error=False
    )
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert "No space left on device" in str(failure.event_specific_data.error)
    assert paths["published"].read_bytes() == published
    assert (paths["reports"] / "index.html").read_text() == index
    assert sorted(p.name for p in tmp_path.glob("reports*")) == ["reports"]
