"""Compare the tables the dbt project built on Spark with the same tables built on DuckDB, row for
row and to the cent (docs/spark.md).

Spark writes each model as a Parquet folder in its warehouse directory
(`<warehouse>/<schema>.db/<table>/`); DuckDB reads those folders and compares them with its own
tables: every row of either side must be on the other (multiset difference both ways, on the
columns of the DuckDB table, by name). Values compare by value, so DECIMAL(18, 2) on one side and
DECIMAL(38, 2) on the other agree, and 12.34 never equals 12.339999.

    python -m dagster_project.engines.compare --duckdb WAREHOUSE --spark-warehouse DIR [MODEL ...]
"""

import argparse
from dataclasses import dataclass
from pathlib import Path

from dagster_project.warehouse import connect


@dataclass(frozen=True)
class Difference:
    table: str
    rows: int  # DuckDB's rows
    only_duckdb: int
    only_spark: int
    missing_columns: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        return not (self.only_duckdb or self.only_spark or self.missing_columns)

    def __str__(self) -> str:
        if self.agrees:
            return f"{self.table}: {self.rows} rows, equal"
        if self.missing_columns:
            return f"{self.table}: columns missing on Spark: {', '.join(self.missing_columns)}"
        return (
            f"{self.table}: {self.rows} rows; {self.only_duckdb} only on DuckDB, "
            f"{self.only_spark} only on Spark"
        )


def spark_folder(spark_warehouse: Path, schema: str, table: str) -> Path:
    return spark_warehouse / f"{schema}.db" / table


def compare_table(con, spark_warehouse: Path, schema: str, table: str) -> Difference:
    folder = spark_folder(spark_warehouse, schema, table)
    con.execute(
        f"create or replace temp view spark_side as "
        f"select * from read_parquet('{folder}/*.parquet')"
    )
    duck_columns = [row[0] for row in con.execute(f"describe {schema}.{table}").fetchall()]
    spark_columns = {row[0] for row in con.execute("describe spark_side").fetchall()}
    missing = tuple(column for column in duck_columns if column not in spark_columns)
    rows = con.execute(f"select count(*) from {schema}.{table}").fetchone()[0]
    if missing:
        return Difference(f"{schema}.{table}", rows, 0, 0, missing)
    columns = ", ".join(f'"{column}"' for column in duck_columns)
    duck = f"select {columns} from {schema}.{table}"
    spark = f"select {columns} from spark_side"
    only_duckdb = con.execute(f"select count(*) from ({duck} except all {spark})").fetchone()[0]
    only_spark = con.execute(f"select count(*) from ({spark} except all {duck})").fetchone()[0]
    return Difference(f"{schema}.{table}", rows, only_duckdb, only_spark)


def built_tables(spark_warehouse: Path) -> list[tuple[str, str]]:
    """(schema, table) of every model table Spark wrote (the sources are not models)."""
    return sorted(
        (schema.name.removesuffix(".db"), table.name)
        for schema in spark_warehouse.glob("*.db")
        for table in schema.iterdir()
        if table.is_dir() and any(table.glob("*.parquet"))
    )


def compare(duckdb_path: Path, spark_warehouse: Path, tables=None) -> list[Difference]:
    tables = tables or built_tables(spark_warehouse)
    with connect(duckdb_path, read_only=True) as con:
        return [compare_table(con, spark_warehouse, schema, table) for schema, table in tables]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duckdb", type=Path, required=True, help="the DuckDB warehouse file")
    parser.add_argument("--spark-warehouse", type=Path, required=True)
    parser.add_argument("tables", nargs="*", help="schema.table (default: every table Spark built)")
    args = parser.parse_args(argv)
    tables = [tuple(name.split(".", 1)) for name in args.tables]
    differences = compare(args.duckdb, args.spark_warehouse, tables)
    for difference in differences:
        print(difference)
    return 0 if all(difference.agrees for difference in differences) else 1


if __name__ == "__main__":
    raise SystemExit(main())
