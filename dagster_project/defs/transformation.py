"""The dbt project as Dagster assets: one asset per model, seed and source, downstream of the
ingestion assets through the dbt sources (raw/<table>, quality/<table>), and one asset check per
dbt test.

dbt runs as `dbt build` in its own process (dagster-dbt's DbtCliResource). A run with partitions
passes its trusts' Collection Periods as the incremental window (`--vars`, transformation/
dbt_args.py); a run without rebuilds every row. Which models a run builds is the run's asset
selection, which dagster-dbt hands to dbt as `--select` (the monthly job: everything downstream
of the tapes, i.e. `source:raw.loan_status+`).
"""

from pathlib import Path

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets

from dagster_project.partitions import run_partitions
from dagster_project.transformation.dbt_args import build_args

DBT_PROJECT = DbtProject(project_dir=Path(__file__).resolve().parents[2] / "dbt")
DBT_PROJECT.prepare_if_dev()


class Translator(DagsterDbtTranslator):
    def get_group_name(self, dbt_resource_props) -> str:
        fqn = dbt_resource_props.get("fqn", [])
        return fqn[1] if len(fqn) > 2 else "dbt"


@dbt_assets(
    manifest=DBT_PROJECT.manifest_path, project=DBT_PROJECT, dagster_dbt_translator=Translator()
)
def warehouse_models(context: dg.AssetExecutionContext, dbt: DbtCliResource):
    args = build_args(run_partitions(context))
    context.log.info(f"dbt {' '.join(args)}")
    yield from dbt.cli(args, context=context).stream()
