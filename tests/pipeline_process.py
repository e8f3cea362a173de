"""The real pipeline in a subprocess, on a warehouse of its own (fault and concurrency tests)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]


def pipeline_env(inputs: Path, folder: Path) -> dict:
    home = folder / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "CAOT_INPUT_DIR": str(inputs),
        "CAOT_WAREHOUSE_WORK": str(folder / "work" / "warehouse.duckdb"),
        "CAOT_WAREHOUSE": str(folder / "warehouse.duckdb"),
        "CAOT_REPORTS_DIR": str(folder / "reports"),
        "CAOT_GX_DIR": str(folder / "gx"),
    }


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
