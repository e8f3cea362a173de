"""dbt models as Dagster assets, downstream of the ingestion assets through dbt sources."""

import datetime as dt
import importlib.metadata
import os
import shutil
from functools import cached_property
from pathlib import Path

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets
from packaging import version

from dagster_project.quality import validation
from dagster_project.resources import WarehouseResource
from dagster_project.transformation import build_plan
from dagster_project.transformation.dbt_args import build_args

DBT_DIR = Path(__file__).resolve().parents[2] / "dbt"
DBT_PROJECT = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)
DBT_PROJECT.prepare_if_dev()
PARTIAL_PARSE = "partial_parse.msgpack"


class DbtCli(DbtCliResource):
    """dbt run as a subprocess, without the in-process handle on dbt's adapter (about 1 s to open)
    that dagster-dbt uses only to fetch row counts and column metadata, which we do not ask for,
    and without running `dbt --version` first."""

    def _initialize_dbt_core_adapter(self, args):
        return None

    @cached_property
    def _cli_version(self) -> version.Version:
        """The version of this environment's dbt (its executable is the one beside this
        interpreter), read from the package rather than from `dbt --version` (a 2 s start-up)."""
        return version.parse(importlib.metadata.version("dbt-core"))


class Translator(DagsterDbtTranslator):
    def get_group_name(self, dbt_resource_props) -> str:
        fqn = dbt_resource_props.get("fqn", [])
        return fqn[1] if len(fqn) > 2 else "dbt"


def _parse_cache(work_path: str) -> Path:
    """dbt's partial-parse state for this warehouse: dbt reparses the whole project (about 2 s)
    when the profile differs from the last parse, and the profile holds the warehouse path."""
    return Path(work_path).parent / "dbt_parse"


@dbt_assets(
    manifest=DBT_PROJECT.manifest_path, dagster_dbt_translator=Translator(), project=DBT_PROJECT
)
def warehouse_models(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse: WarehouseResource
):
    # dbt reads the warehouse path from the environment (dbt/profiles.yml).
    os.environ["CAOT_WAREHOUSE_WORK"] = warehouse.work_path
    with warehouse.connect() as con:
        plan = build_plan.plan(con, DBT_DIR)
        build_plan.write(con, plan)
    context.log.info(f"dbt build: {plan.reason}")
    cache = _parse_cache(warehouse.work_path)
    target_path = os.environ.get("DBT_TARGET_PATH")
    if (cache / PARTIAL_PARSE).exists():
        os.environ["DBT_TARGET_PATH"] = str(cache)  # dagster-dbt copies the state from here
    try:
        invocation = dbt.cli(build_args(full_refresh=plan.full_refresh), context=context)
        # dbt now runs in its own process: load the servicing suite's library meanwhile
        validation.start_loading()
        yield from invocation.stream()
    finally:
        if target_path is None:
            os.environ.pop("DBT_TARGET_PATH", None)
        else:
            os.environ["DBT_TARGET_PATH"] = target_path
        with warehouse.connect() as con:
            build_plan.clear(con)
    with warehouse.connect() as con:
        build_plan.record(con, plan, dt.datetime.now(dt.UTC))
    parsed = invocation.target_path / PARTIAL_PARSE
    if parsed.exists():
        cache.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(parsed, cache / PARTIAL_PARSE)
    if invocation.target_path.is_relative_to(cache):
        shutil.rmtree(invocation.target_path, ignore_errors=True)  # kept only when dbt failed
