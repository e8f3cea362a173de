"""The dbt sources as Parquet files, for the dbt project on Apache Spark (docs/spark.md).

The Dagster ingestion assets validate every delivery and write the `raw` and `quality` schemas of
the DuckDB warehouse; this writes each of those tables as a Parquet folder,
`<out>/<schema>/<table>/data.parquet`, which the Spark target registers as its sources
(dbt/macros/engine_sources.sql). Types are kept: DECIMAL stays DECIMAL, DATE stays DATE.

    python -m dagster_project.engines.parquet_sources [--warehouse FILE] --out DIR
"""

import argparse
import shutil
from pathlib import Path

import yaml

from dagster_project.deal import PROJECT_ROOT
from dagster_project.warehouse import connect, published_path, table_exists

SOURCES_FILE = PROJECT_ROOT / "dbt" / "models" / "staging" / "_sources.yml"


def source_tables() -> list[tuple[str, str]]:
    """(schema, table) of every dbt source, as _sources.yml declares them."""
    sources = yaml.safe_load(SOURCES_FILE.read_text())["sources"]
    return [(source["schema"], table["name"]) for source in sources for table in source["tables"]]


def write(warehouse: Path, out: Path) -> list[Path]:
    """Every source table of `warehouse` as `<out>/<schema>/<table>/data.parquet`, replacing what
    was there. A table the warehouse does not have (the reported_* tables exist only in
    reconciliation mode) gets no folder."""
    written = []
    with connect(warehouse, read_only=True) as con:
        for schema, table in source_tables():
            folder = out / schema / table
            shutil.rmtree(folder, ignore_errors=True)
            if not table_exists(con, schema, table):
                continue
            folder.mkdir(parents=True)
            target = folder / "data.parquet"
            con.execute(f"copy {schema}.{table} to '{target}' (format parquet)")
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warehouse", type=Path, default=None, help="default: the published one")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    written = write(args.warehouse or published_path(), args.out)
    print(f"{len(written)} source tables written under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
