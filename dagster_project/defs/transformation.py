"""The dbt project as Dagster assets: one asset per model, seed and source, downstream of the
ingestion assets through the dbt sources (raw/<table>, quality/<table>; the monthly tapes' three
tables are raw/monthly_tapes), and one asset check per dbt test.

dbt runs as `dbt build` in its own process (dagster-dbt's DbtCliResource, which hands dbt this
process's environment). A run with partitions passes its trusts' Collection Periods as the
incremental window (the environment variable CAOT_REBUILD_FROM, transformation/dbt_args.py); a
run without rebuilds every row. Which models a run builds is the run's asset
selection, which dagster-dbt hands to dbt as `--select` (the monthly job: everything downstream
of the tapes, i.e. `source:raw.loan_status+`).
"""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
from dagster_project.transformation.dbt_args import build_args, build_environment
from dagster_project.warehouse import work_path

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
    keys = run_partitions(context)
    args, environment = build_args(keys), build_environment(keys)
    shown = [f"{name}={value}" if value else f"{name} unset" for name, value in environment.items()]
    context.log.info(f"dbt {' '.join(args)} ({', '.join(shown)})")
    with environment_of_dbt(environment):  # dbt's process starts here, with its environment
        invocation = dbt.cli(args, context=context, target_path=dbt_target_path())
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


def dbt_target_path() -> Path:
    """dbt's target folder (its artifacts, log and parse) of the working warehouse, beside it and
    named after it (data/work/warehouse.dbt/): each run of that warehouse reads the parse the run
    before left there (dbt's partial parsing), where a folder of its own per run would parse the
    whole project again whenever the profile differs from the parse that `make` keeps in
    dbt/target (another warehouse). One run writes a warehouse at a time (warehouse.run_lock)."""
    work = work_path()
    return work.parent / f"{work.stem}.dbt"


@contextmanager
def environment_of_dbt(changes: Mapping[str, str | None]) -> Iterator[None]:
    """This process's environment with `changes` (None: unset) while dbt's process is started,
    then as it was. The step runs alone in its process (the jobs' in-process executor)."""
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            set_variable(name, value)
        yield
    finally:
        for name, value in saved.items():
            set_variable(name, value)


def set_variable(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


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
