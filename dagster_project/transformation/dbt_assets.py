"""dbt models as Dagster assets, downstream of the ingestion assets through dbt sources."""

import os
from pathlib import Path

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets

from dagster_project.resources import WarehouseResource
from dagster_project.transformation.dbt_args import build_args

DBT_DIR = Path(__file__).resolve().parents[2] / "dbt"
DBT_PROJECT = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)
DBT_PROJECT.prepare_if_dev()


class Translator(DagsterDbtTranslator):
    def get_group_name(self, dbt_resource_props) -> str:
        fqn = dbt_resource_props.get("fqn", [])
        return fqn[1] if len(fqn) > 2 else "dbt"


@dbt_assets(
    manifest=DBT_PROJECT.manifest_path, dagster_dbt_translator=Translator(), project=DBT_PROJECT
)
def warehouse_models(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse: WarehouseResource
):
    # dbt reads the warehouse path from the environment (dbt/profiles.yml).
    os.environ["CAOT_WAREHOUSE_WORK"] = warehouse.work_path
    yield from dbt.cli(build_args(), context=context).stream()
