"""Readers during a run, and two runs at once, with the real pipeline in subprocesses."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from conftest import deliveries
from pipeline_process import ROOT, pipeline_env, run_here, start

pytestmark = pytest.mark.slow


def holds_lock(folder: Path, pid: int) -> bool:
    lock = folder / "work" / "warehouse.duckdb.lock"
    return lock.exists() and lock.read_text().strip() == f"pid {pid}"


def state(published: Path) -> tuple:
    """What a reader sees: periods built, the last pool balance, tape rows and deliveries loaded,
    certificate versions recorded."""
    con = duckdb.connect(str(published), read_only=True)
    try:
        return con.execute(
            "select (select count(*) from marts.fct_pool_period), "
            "(select ending_pool_balance from marts.fct_pool_period order by period_number desc "
            "limit 1), (select count(*) from raw.loan_status), "
            "(select count(*) from raw.deliveries), "
            "(select count(*) from history.certificate_versions)"
        ).fetchone()
    finally:
        con.close()


def test_readers_see_the_previous_complete_state_and_a_second_run_waits_or_fails_cleanly(
    small_deal, tmp_path
):
    inputs = tmp_path / "inputs"  # the first year of the small deal
    shutil.copytree(small_deal, inputs, ignore=shutil.ignore_patterns("deliveries"))
    for period in sorted(p.name for p in deliveries(small_deal).iterdir())[:12]:
        shutil.copytree(deliveries(small_deal) / period, deliveries(inputs) / period)
    env = pipeline_env(inputs, tmp_path)
    periods = sorted(p.name for p in deliveries(inputs).iterdir())
    # the state readers see first: half the year, published (a run in this process)
    first = run_here(env, *[arg for p in periods[:-6] for arg in ("--period", p)])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    before = state(tmp_path / "warehouse.duckdb")
    assert before[0] == len(periods) - 6

    second = start(env)  # every period: six more to load, everything rebuilt
    seen, errors, refused, waiting = [], [], None, None
    while second.poll() is None:
        if refused is None and holds_lock(tmp_path, second.pid):
            refused = subprocess.run(
                [sys.executable, "-m", "dagster_project.pipeline"],
                env=env,
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )
            waiting = start(env, "--wait", "600")
        try:
            seen.append(state(tmp_path / "warehouse.duckdb"))
        except duckdb.Error as error:  # a reader must never fail
            errors.append(repr(error))
        time.sleep(0.2)
    output = second.stdout.read()
    assert second.returncode == 0, output
    after = state(tmp_path / "warehouse.duckdb")

    assert errors == []
    assert after[0] == len(periods) and after != before
    assert set(seen) <= {before, after}  # never a half-written run
    assert seen.count(before) >= 3  # readers were served the previous state during the run

    # the run started while the first held the warehouse refused at once, and said why
    assert refused is not None and refused.returncode == 75
    assert "another run is writing" in refused.stderr
    # the one told to wait ran after it: every file already loaded, nothing loaded again, no new
    # certificate version, the same state
    output, _ = waiting.communicate(timeout=600)
    assert waiting.returncode == 0, output
    assert state(tmp_path / "warehouse.duckdb") == after
    # each run is the job the UI, the schedule and the sensor run, recorded under its name
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        runs = instance.get_runs()
    assert len(runs) >= 2 and {run.job_name for run in runs} == {"monthly_servicing_run"}
