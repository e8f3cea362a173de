"""The real pipeline on a warehouse of its own: in a subprocess (fault and concurrency tests) or
in this process (run_here)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]


def pipeline_env(inputs: Path, folder: Path) -> dict:
    """The environment of a pipeline run on `inputs` with its own warehouse, reports, Great
    Expectations project and Dagster instance under `folder`."""
    from dagster_project.warehouse import isolated_environment

    return isolated_environment(inputs, folder)


def start(env: dict, *args: str) -> subprocess.Popen:
    """Its own session, so a test can kill it with everything it started (dbt)."""
    return subprocess.Popen(
        [sys.executable, "-m", "dagster_project.pipeline", *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def run(env: dict, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dagster_project.pipeline", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def period_args(periods: list[str]) -> list[str]:
    return [arg for period in periods for arg in ("--period", period)]


def query(path: Path, sql: str, params=None) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def differences_from_a_full_build(work: Path, scratch: Path) -> dict[str, int]:
    """Rows that differ, in every table the dbt models make, between a warehouse built run by run
    (the loan-level models incrementally, for the periods of each run) and a copy of it whose
    models dbt rebuilt from scratch (--full-refresh) on the same raw data."""
    scratch.mkdir(parents=True, exist_ok=True)
    copy = scratch / "rebuilt.duckdb"
    shutil.copyfile(work, copy)
    subprocess.run(
        # every model (their tests ran in the pipeline)
        [str(Path(sys.executable).parent / "dbt"), "run", "--quiet", "--full-refresh",
         "--target-path", str(scratch / "target"), "--log-path", str(scratch / "logs")],
        cwd=ROOT / "dbt",
        env={**os.environ, "CAOT_WAREHOUSE_WORK": str(copy)},
        check=True,
    )  # fmt: skip
    con = duckdb.connect(str(work), read_only=True)
    try:
        con.execute(f"attach '{copy}' as rebuilt (read_only)")
        tables = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables "
            "where table_catalog = current_database() and table_type = 'BASE TABLE' "
            "and table_schema in ('intermediate', 'marts') order by 1"
        ).fetchall()
        assert len(tables) > 10, tables
        out = {}
        for (table,) in tables:
            (count,) = con.execute(
                f"select count(*) from ((select * from {table} except all "
                f"select * from rebuilt.{table}) union all (select * from rebuilt.{table} "
                f"except all select * from {table}))"
            ).fetchone()
            if count:
                out[table] = count
        return out
    finally:
        con.close()


def run_here(env: dict, *args: str) -> subprocess.CompletedProcess:
    """The command line's run in this process (the same jobs, without starting Python again),
    under `env`, with what it prints captured, in an ephemeral Dagster instance (runs and events in
    memory: no run reads an earlier run's records, and the SQLite storage costs about 4 s a run;
    the subprocess tests here run on a real instance)."""
    import contextlib
    import io

    import dagster as dg

    from dagster_project.pipeline import main

    saved = dict(os.environ)
    out, err = io.StringIO(), io.StringIO()
    os.environ.update(env)
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            dg.DagsterInstance.ephemeral() as instance,
        ):
            code = main(list(args), instance=instance)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(["pipeline", *args], code, out.getvalue(), err.getvalue())
