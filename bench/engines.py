"""The dbt project on DuckDB and on Apache Spark, on the same deliveries (docs/spark.md).

    python -m bench.engines [--trusts N] [--receivables R] [--out data/bench/engines]

Generates a shelf of N trusts of R receivables each, runs the pipeline on DuckDB (ingestion and
every model), writes the sources as Parquet, then times the seed and every model (`dbt build`
without the tests) on each engine, from the same sources, every row (DuckDB:
--full-refresh; Spark: an in-process session, its start-up included), and compares every table
to the cent. Needs `make install-spark`. Prints one Markdown row per engine.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from dagster_project.deal import PROJECT_ROOT
from dagster_project.engines import parquet_sources
from dagster_project.engines.compare import compare
from dagster_project.warehouse import connect, isolated_environment

DBT = str(Path(sys.executable).parent / "dbt")
# The seed (the priority of payments) and every model; not the data tests.
RUN = ["build", "-q", "--resource-type", "seed", "--resource-type", "model"]


def _timed(argv: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=PROJECT_ROOT / "dbt", env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trusts", type=int, default=1)
    parser.add_argument("--receivables", type=int, default=800)
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "data" / "bench" / "engines")
    args = parser.parse_args(argv)
    folder = args.out / f"{args.trusts}x{args.receivables}"
    shutil.rmtree(folder, ignore_errors=True)
    inputs = folder / "inputs"
    subprocess.run(
        [sys.executable, "-m", "dagster_project.generator", "--trusts", str(args.trusts),
         "--receivables", str(args.receivables), "--out", str(inputs), "--deals-out",
         str(folder / "deals")],
        check=True, capture_output=True,
    )  # fmt: skip
    env = isolated_environment(inputs, folder / "duckdb")
    env["CAOT_DEALS_DIR"] = str(folder / "deals")
    subprocess.run(
        [sys.executable, "-m", "dagster_project.pipeline", "--wait", "600"],
        env=env, cwd=PROJECT_ROOT, check=True, capture_output=True,
    )  # fmt: skip
    warehouse = Path(env["CAOT_WAREHOUSE"])
    parquet_sources.write(warehouse, folder / "sources")
    with connect(warehouse, read_only=True) as con:
        rows = con.execute("select count(*) from marts.fct_receivable_period").fetchone()[0]

    duck_env = {**env, "CAOT_WAREHOUSE_WORK": str(folder / "duckdb" / "engine.duckdb")}
    shutil.copyfile(warehouse, duck_env["CAOT_WAREHOUSE_WORK"])
    duck_env["DBT_TARGET_PATH"] = str(folder / "target-duckdb")
    duckdb_seconds = _timed([DBT, *RUN, "--full-refresh"], duck_env)

    spark_env = {
        **os.environ,
        "CAOT_SPARK_SOURCES": str(folder / "sources"),
        "CAOT_SPARK_WAREHOUSE": str(folder / "spark"),
        "DBT_TARGET_PATH": str(folder / "target-spark"),
    }
    spark_seconds = _timed([DBT, *RUN, "--target", "spark"], spark_env)
    differences = compare(Path(duck_env["CAOT_WAREHOUSE_WORK"]), folder / "spark")
    agree = sum(d.agrees for d in differences)
    print("| trusts | receivable-periods | engine | seconds | rows per second | tables equal |")
    print("|---|---|---|---|---|---|")
    for engine, seconds in (("DuckDB", duckdb_seconds), ("Spark (local[*])", spark_seconds)):
        print(
            f"| {args.trusts} | {rows:,} | {engine} | {seconds:.1f} | {rows / seconds:,.0f} "
            f"| {agree} of {len(differences)} |"
        )
    return 0 if agree == len(differences) else 1


if __name__ == "__main__":
    raise SystemExit(main())
