"""The dbt project on Apache Spark agrees with DuckDB to the cent (docs/spark.md, make test-spark).

The small deal's warehouse is built by the real pipeline on DuckDB; its sources go to Parquet;
the same dbt project builds every model on an in-process Spark session; every table Spark wrote
must equal DuckDB's, row for row, the waterfall and the certificate included. The money macros are
also checked on Spark against Python's Decimal on values where a floating-point division, or a
DECIMAL quotient rounded to six places, gives another cent.
"""

import json
import os
import shutil
import subprocess
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from conftest import DBT_DIR, ROOT

pytestmark = pytest.mark.spark

DBT = ROOT / ".venv" / "bin" / "dbt"


def _spark_missing() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed: make install-spark"
    if shutil.which("java") is None:
        return "no Java runtime (Spark needs Java 17): make install-spark"
    return None


if reason := _spark_missing():
    pytest.skip(reason, allow_module_level=True)


def dbt_on_spark(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "CAOT_SPARK_SOURCES": str(folder / "sources"),
        "CAOT_SPARK_WAREHOUSE": str(folder / "spark"),
        "CAOT_SPARK_SHUFFLE_PARTITIONS": "2",
        "DBT_TARGET_PATH": str(folder / "target"),
        "DBT_LOG_PATH": str(folder / "logs"),
    }
    return subprocess.run(
        [str(DBT), *argv, "--target", "spark"],
        cwd=DBT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def spark_build(built_warehouse, tmp_path_factory) -> tuple[Path, Path]:
    from dagster_project.engines import parquet_sources

    folder = tmp_path_factory.mktemp("spark")
    parquet_sources.write(built_warehouse["published"], folder / "sources")
    result = dbt_on_spark(folder, "build")  # seed, models, tests
    assert result.returncode == 0, result.stdout[-4000:]
    return built_warehouse["published"], folder / "spark"


def portable_tables() -> set[tuple[str, str]]:
    """(schema, table) of every model that Spark stores as a table."""
    listed = subprocess.run(
        [str(DBT), "ls", "--resource-type", "model",
         "--output", "json", "--target", "spark", "-q"],
        cwd=DBT_DIR, capture_output=True, text=True, check=True,
        env={**os.environ, "DBT_TARGET_PATH": str(DBT_DIR / "target" / "spark")},
    ).stdout  # fmt: skip
    nodes = [json.loads(line) for line in listed.splitlines() if line.startswith("{")]
    return {
        (node["config"]["schema"], node["name"])
        for node in nodes
        if node["config"]["materialized"] != "view"
    }


def test_every_portable_mart_equals_duckdb_to_the_cent(spark_build):
    from dagster_project.engines.compare import built_tables, compare

    duckdb_file, spark_warehouse = spark_build
    built = set(built_tables(spark_warehouse))
    expected = portable_tables()
    assert expected <= built, f"not built on Spark: {sorted(expected - built)}"
    assert {
        ("marts", "fct_receivable_period"),
        ("marts", "fct_pool_period"),
        ("marts", "rpt_roll_rates"),
        ("intermediate", "int_waterfall__distribution_dates"),
        ("marts", "rpt_servicer_certificate"),
        ("marts", "rpt_certificate_tieouts"),
    } <= expected
    differences = compare(duckdb_file, spark_warehouse, sorted(expected))
    assert [str(d) for d in differences if not d.agrees] == []
    rows = {d.table: d.rows for d in differences}
    assert rows["marts.fct_receivable_period"] > 10_000  # a whole life of the small deal
    # every Distribution Date of that life, every line of the certificate
    dates = rows["marts.fct_distribution_date"]
    assert dates > 60
    assert rows["marts.rpt_servicer_certificate"] > 100 * dates


def half_up(numerator: int, denominator: int) -> int:
    return int((Decimal(numerator) / Decimal(denominator)).quantize(Decimal(1), ROUND_HALF_UP))


# (numerator, denominator) of div_half_up: exact halves both signs, a quotient 1e-12 below a half
# (a DECIMAL quotient rounded to six places reads it as a half), 21 digits (beyond a DOUBLE)
QUOTIENTS = [
    (5, 2),
    (-5, 2),
    (359_999_999_999 * 1000 + 179_999_999_998, 359_999_999_999),
    (123_456_789_012_345_678_901, 7),
]
# percent_of: ten decimals of a ratio (Spark's DECIMAL product would keep six)
PERCENTS = [(1, 3), (2, 3), (123_456_789, 987_654_321_987)]


def exact(kind: str, n: int, d: int) -> Decimal:
    if kind == "quotient":
        return Decimal(half_up(n, d))
    if kind == "percent":
        return Decimal(half_up(n * 10**12, d)).scaleb(-10)
    return Decimal(n).scaleb(-2)  # amount: cents as dollars


def test_money_macros_are_exact_on_spark(spark_build):
    """div_half_up, percent_of and from_cents on Spark equal Python's Decimal."""
    macros = {"quotient": "div_half_up('{n}', '{d}')", "percent": "percent_of('{n}', '{d}')"}
    cases = [("quotient", n, d) for n, d in QUOTIENTS] + [("percent", n, d) for n, d in PERCENTS]
    selects = [
        f"select '{kind}' as kind, '{n}' as n, '{d}' as d, "
        f"cast({{{{ {macros[kind].format(n=n, d=d)} }}}} as string) as value"
        for kind, n, d in cases
    ] + [
        f"select 'amount' as kind, '{d}' as n, '1' as d, "
        f"cast({{{{ from_cents('{d}') }}}} as string) as value"
        for _n, d in QUOTIENTS
    ]
    _duckdb_file, spark_warehouse = spark_build
    query = " union all ".join(selects)
    argv = ["show", "--inline", query, "--output", "json", "--limit", "100", "-q"]
    result = dbt_on_spark(spark_warehouse.parent, *argv)
    assert result.returncode == 0, result.stdout[-3000:]
    shown = json.loads(result.stdout[result.stdout.index("{") :])["show"]
    assert len(shown) == len(selects)
    for row in shown:
        n, d, value = int(row["n"]), int(row["d"]), Decimal(row["value"])
        assert value == exact(row["kind"], n, d), row


def test_the_cases_tell_exact_from_approximate():
    """The cases above are ones where the approximate arithmetic gives another result."""
    n, d = QUOTIENTS[2]
    rounded_six = (Decimal(2 * n + d) / Decimal(2 * d)).quantize(Decimal("0.000001"), ROUND_HALF_UP)
    assert int(rounded_six) != (2 * n + d) // (2 * d)  # six places read it as the next integer
    n, d = QUOTIENTS[3]
    assert round(n / d) != half_up(n, d)  # DOUBLE loses the last digits
