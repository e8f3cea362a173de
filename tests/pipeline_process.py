"""The real pipeline in a subprocess, on a warehouse of its own (fault and concurrency tests)."""

import subprocess
import sys
from pathlib import Path

import duckdb

from dagster_project.warehouse import isolated_environment

ROOT = Path(__file__).resolve().parents[1]


def pipeline_env(inputs: Path, folder: Path) -> dict:
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
