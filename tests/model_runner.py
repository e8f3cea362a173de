"""Run the compiled dbt models on small scenario data in memory, in milliseconds per scenario.

`dbt compile` runs once; each scenario gets a fresh in-memory catalog named like the compiled
references, its raw tables are filled by the test, the seeds are loaded from their CSV files, and
every model (or the ancestors of one) is created from its compiled SQL in dependency order. The
SQL under test is exactly dbt's.
"""

import json
import os
import subprocess
import sys
from graphlib import TopologicalSorter
from pathlib import Path

import duckdb

DBT_DIR = Path(__file__).resolve().parents[1] / "dbt"
CATALOG = "scenario"


class ModelRunner:
    def __init__(self, workdir: Path, dbt_vars: str | None = None):
        dbt = Path(sys.executable).parent / "dbt"
        target = workdir / "target"
        env = {**os.environ, "CAOT_WAREHOUSE_WORK": str(workdir / f"{CATALOG}.duckdb")}
        extra = ["--vars", dbt_vars] if dbt_vars else []
        subprocess.run(
            [str(dbt), "compile", "--quiet", "--target-path", str(target), *extra],
            cwd=DBT_DIR,
            check=True,
            env=env,
        )
        manifest = json.loads((target / "manifest.json").read_text())
        self.models = {
            uid: node for uid, node in manifest["nodes"].items() if node["resource_type"] == "model"
        }
        self.seeds = [n for n in manifest["nodes"].values() if n["resource_type"] == "seed"]
        self.data_tests = {
            node["name"]: node["compiled_code"]
            for node in manifest["nodes"].values()
            if node["resource_type"] == "test" and "compiled_code" in node
        }
        graph = {
            uid: [d for d in node["depends_on"]["nodes"] if d in self.models]
            for uid, node in self.models.items()
        }
        self.graph = graph
        self.order = list(TopologicalSorter(graph).static_order())

    def data_test(self, prefix: str) -> str:
        """The compiled SQL of the one data test whose name starts with `prefix`: the rows it
        returns are its failures."""
        (sql,) = [sql for name, sql in self.data_tests.items() if name.startswith(prefix)]
        return sql

    def _ancestors(self, names: str | tuple[str, ...]) -> set[str]:
        names = (names,) if isinstance(names, str) else names
        wanted = {uid for uid, node in self.models.items() if node["name"] in names}
        stack = list(wanted)
        while stack:
            for parent in self.graph[stack.pop()]:
                if parent not in wanted:
                    wanted.add(parent)
                    stack.append(parent)
        return wanted

    def run(
        self, load_raw, up_to: str | tuple[str, ...] | None = None
    ) -> duckdb.DuckDBPyConnection:
        """A connection holding `load_raw`'s raw tables and every model built on them (or only
        the models `up_to` names and their ancestors)."""
        con = duckdb.connect()
        con.execute(f"attach ':memory:' as {CATALOG}")
        con.execute(f"use {CATALOG}")
        load_raw(con)
        for seed in self.seeds:
            types = seed["config"].get("column_types") or {}
            con.execute(f'create schema if not exists "{seed["schema"]}"')
            con.execute(
                f'create or replace table "{seed["schema"]}"."{seed["alias"]}" as select * from '
                "read_csv($path, header = true, columns = $types)",
                {"path": str(DBT_DIR / seed["original_file_path"]), "types": types},
            )
        chosen = self._ancestors(up_to) if up_to else set(self.order)
        for uid in self.order:
            if uid not in chosen:
                continue
            node = self.models[uid]
            con.execute(f'create schema if not exists "{node["schema"]}"')
            con.execute(
                f'create or replace table "{node["schema"]}"."{node["alias"]}" as '
                f"{node['compiled_code']}"
            )
        return con
