"""The dbt project as Dagster assets: one asset per model, seed and source, downstream of the
ingestion assets through the dbt sources (raw/<table>, quality/<table>; the monthly tapes' three
tables are raw/monthly_tapes), and one asset check per dbt test.

dbt runs as `dbt build` in its own process (dagster-dbt's DbtCliResource). A run with partitions
passes its trusts' Collection Periods as the incremental window (`--vars`, transformation/
dbt_args.py); a run without rebuilds every row. Which models a run builds is the run's asset
selection, which dagster-dbt hands to dbt as `--select` (the monthly job: everything downstream
of the tapes, i.e. `source:raw.loan_status+`).
"""

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import dagster as dg
from dagster_dbt import (
    DagsterDbtTranslator,
    DagsterDbtTranslatorSettings,
    DbtCliResource,
    DbtProject,
    dbt_assets,
)

from dagster_project.partitions import run_partitions
from dagster_project.transformation.dbt_args import build_args

# the dbt installed beside this interpreter (the project's .venv), whatever PATH says
DBT_EXECUTABLE = str(Path(sys.executable).parent / "dbt")


# The manifest is dbt's parse of the project, made by `make` before anything runs (the Makefile's
# dbt/target/manifest.json); dagster-dbt's prepare_if_dev is not used: it runs `dbt` from PATH.
DBT_PROJECT = DbtProject(project_dir=Path(__file__).resolve().parents[2] / "dbt")


class Translator(DagsterDbtTranslator):
    def __init__(self):
        # the monthly tapes' three tables are one asset (_sources.yml): several sources, one key
        super().__init__(
            settings=DagsterDbtTranslatorSettings(enable_duplicate_source_asset_keys=True)
        )

    def get_group_name(self, dbt_resource_props) -> str:
        fqn = dbt_resource_props.get("fqn", [])
        return fqn[1] if len(fqn) > 2 else "dbt"


@dbt_assets(
    manifest=DBT_PROJECT.manifest_path, project=DBT_PROJECT, dagster_dbt_translator=Translator()
)
def warehouse_models(context: dg.AssetExecutionContext, dbt: DbtCliResource):
    args = build_args(run_partitions(context))
    context.log.info(f"dbt {' '.join(args)}")
    invocation = dbt.cli(args, context=context)
    # dbt's events are read to the end before any is yielded: an interrupt (SIGTERM or SIGINT,
    # raised by Dagster in the step) then lands in this frame, where dbt is stopped with it
    events = []
    try:
        for event in invocation.stream():
            events.append(event)
    except Exception:  # dbt failed: record what it built, then fail the step
        stop(invocation.process)
        yield from events
        raise
    except BaseException:  # interrupted
        stop(invocation.process)
        raise
    yield from events
    prune_run_folders(invocation.target_path.parent, context.op_execution_context.op.name)


STOP_SECONDS = 30  # dbt finishes its current statement and closes the warehouse on SIGINT


def stop(process: subprocess.Popen, seconds: float = STOP_SECONDS) -> None:
    """No dbt outlives its step. dagster-dbt forwards an interrupt to dbt only when it lands
    while waiting for dbt's output; one that lands while an event is converted, or between two
    events, would leave dbt running and writing the warehouse. Ask dbt to stop (SIGINT), then
    kill it."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


KEPT_RUN_FOLDERS = 12  # a year of monthly runs' dbt artifacts (run_results.json, compiled SQL)


def prune_run_folders(target: Path, op_name: str, keep: int = KEPT_RUN_FOLDERS) -> None:
    """dagster-dbt gives each invocation its own folder under dbt's target path
    (<op>-<run>-<id>); keep the newest `keep` of this step's and delete the older ones."""
    runs = sorted(target.glob(f"{op_name}-*"), key=lambda folder: folder.stat().st_mtime)
    for folder in runs[: max(len(runs) - keep, 0)]:
        shutil.rmtree(folder, ignore_errors=True)
