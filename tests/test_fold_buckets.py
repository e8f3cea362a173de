"""The Simple Interest fold in buckets of receivables, one after another
(dbt/macros/fold_buckets.sql), gives the rows of one fold over every receivable: on a build from
scratch and on an incremental build, and the steps then feed the same balances."""

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

DBT_DIR = Path(__file__).resolve().parents[1] / "dbt"
FOLD = "int_receivable__simple_interest_steps"
TABLES = (f"intermediate.{FOLD}", "intermediate.int_receivable_period__principal_balances")
REBUILD_FROM = "2017-06"


def _dbt_run(work: Path, scratch: Path, per_bucket: int, *args: str) -> str:
    size = f"{{fold_transactions_per_bucket: {per_bucket}}}"
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


def test_folding_in_buckets_gives_the_rows_of_one_fold(built_warehouse, tmp_path):
    expected = tmp_path / "expected.duckdb"
    shutil.copyfile(built_warehouse["work"], expected)  # built in one bucket (the default size)
    work = tmp_path / "work.duckdb"
    shutil.copyfile(expected, work)
    con = duckdb.connect(str(work))
    total, later = con.execute(
        "select count(*), count(*) filter (where collection_period >= ?) "
        "from staging.stg_servicer__payment_transactions",
        [REBUILD_FROM],
    ).fetchone()
    con.close()
    per_bucket = math.ceil(later / 3)  # three buckets for the incremental build, more for all
    buckets = math.ceil(total / per_bucket)
    assert buckets > 3

    log = _dbt_run(work, tmp_path, per_bucket, "--full-refresh")
    assert f"folding bucket {buckets} of {buckets}" in log
    assert _differences(work, expected) == {table: 0 for table in TABLES}

    con = duckdb.connect(str(work))
    con.execute("delete from history.model_build_plan")
    con.execute("insert into history.model_build_plan values (?)", [REBUILD_FROM])
    con.close()
    log = _dbt_run(work, tmp_path, per_bucket)
    assert "folding bucket 3 of 3" in log and "folding bucket 4" not in log
    assert _differences(work, expected) == {table: 0 for table in TABLES}
