"""The loan-level models built in buckets of receivables, one after another
(dbt/macros/receivable_buckets.sql), give the rows of one build over every receivable: the Simple
Interest fold and the period balances, on a build from scratch and on an incremental build."""

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

DBT_DIR = Path(__file__).resolve().parents[1] / "dbt"
FOLD = "int_receivable__simple_interest_steps"
BALANCES = "int_receivable_period__principal_balances"
TABLES = (f"intermediate.{FOLD}", f"intermediate.{BALANCES}")
# the rows that size each model's buckets
SIZED_BY = {FOLD: "stg_servicer__payment_transactions", BALANCES: "stg_servicer__loan_status"}
REBUILD_FROM = "2017-06"


def _dbt_run(work: Path, scratch: Path, per_bucket: int, *args: str) -> str:
    size = f"{{rows_per_bucket: {per_bucket}}}"
    result = subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), "run", "--select", f"{FOLD}+1",
         "--exclude", "fct_receivable_period", "--vars", size,
         "--target-path", str(scratch / "target"), "--log-path", str(scratch / "logs"), *args],
        cwd=DBT_DIR,
        env={**os.environ, "CAOT_WAREHOUSE_WORK": str(work)},
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    return result.stdout


def _differences(work: Path, expected: Path) -> dict[str, int]:
    con = duckdb.connect(str(work), read_only=True)
    try:
        con.execute(f"attach '{expected}' as expected (read_only)")
        return {
            table: con.execute(
                f"select count(*) from ((select * from {table} except all "
                f"select * from expected.{table}) union all (select * from expected.{table} "
                f"except all select * from {table}))"
            ).fetchone()[0]
            for table in TABLES
        }
    finally:
        con.close()


def _bucket_counts(work: Path, per_bucket: int, rebuild_from: str = "") -> dict[str, int]:
    con = duckdb.connect(str(work), read_only=True)
    try:
        return {
            model: math.ceil(
                con.execute(
                    f"select count(*) from staging.{rows} where collection_period >= ?",
                    [rebuild_from],
                ).fetchone()[0]
                / per_bucket
            )
            for model, rows in SIZED_BY.items()
        }
    finally:
        con.close()


def _assert_built_in(log: str, buckets: dict[str, int]) -> None:
    for model, count in buckets.items():
        assert f"{model}: bucket {count} of {count}" in log, (model, count)
        assert f"{model}: bucket {count + 1} " not in log


def test_building_in_buckets_gives_the_rows_of_one_build(built_warehouse, tmp_path):
    expected = tmp_path / "expected.duckdb"
    shutil.copyfile(built_warehouse["work"], expected)  # built in one bucket (the default size)
    work = tmp_path / "work.duckdb"
    shutil.copyfile(expected, work)
    # three buckets for the incremental build of the fold, more for everything
    per_bucket = math.ceil(_bucket_counts(work, 1, REBUILD_FROM)[FOLD] / 3)
    everything = _bucket_counts(work, per_bucket)
    assert min(everything.values()) > 3

    log = _dbt_run(work, tmp_path, per_bucket, "--full-refresh")
    _assert_built_in(log, everything)
    assert _differences(work, expected) == {table: 0 for table in TABLES}

    con = duckdb.connect(str(work))
    con.execute("delete from history.model_build_plan")
    con.execute("insert into history.model_build_plan values (?)", [REBUILD_FROM])
    con.close()
    later = _bucket_counts(work, per_bucket, REBUILD_FROM)
    assert later[FOLD] == 3
    log = _dbt_run(work, tmp_path, per_bucket)
    _assert_built_in(log, later)
    assert _differences(work, expected) == {table: 0 for table in TABLES}
