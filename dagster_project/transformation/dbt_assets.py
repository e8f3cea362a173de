"""dbt models as Dagster assets, downstream of the ingestion assets through dbt sources."""

import datetime as dt
import importlib.metadata
import os
import shutil
from functools import cache, cached_property
from pathlib import Path

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets
from packaging import version

from dagster_project import preload
from dagster_project.resources import WarehouseResource
from dagster_project.transformation import build_plan, changed_sources
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


@cache
def _manifest() -> dict:
    return changed_sources.load_manifest(DBT_PROJECT.manifest_path)


def models_to_build(
    con,
    plan: build_plan.BuildPlan | None = None,
    sources: dict[str, str] | None = None,
    changing: frozenset[str] = frozenset(),
) -> list[dg.AssetKey] | None:
    """The dbt models a build must run: those downstream of a source changed since the last
    successful build (changed_sources) or of a table in `changing` ("schema.table": loaded in
    the same run, before the build), or None for every model (no build recorded, the dbt code
    or the deal terms or the schedule changed: build_plan recomputes everything then). `plan`
    and `sources` (the current fingerprints) are computed here when not given."""
    if (plan or build_plan.plan(con, DBT_DIR)).full_refresh:
        return None
    manifest = _manifest()
    changed = changed_sources.changed(con, sources or changed_sources.fingerprints(con, manifest))
    if changed is None:
        return None
    changed |= changed_sources.sources_of(manifest, set(changing))
    return _asset_keys(changed_sources.downstream_models(manifest, changed))


def _asset_keys(models) -> list[dg.AssetKey]:
    nodes = _manifest()["nodes"]
    return [Translator().get_asset_key(nodes[model]) for model in sorted(models)]


def _every_model() -> set[dg.AssetKey]:
    return set(_asset_keys(k for k in _manifest()["nodes"] if k.startswith("model.")))


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
        sources = changed_sources.fingerprints(con, _manifest())
        needed = models_to_build(con, plan, sources)
        build_plan.write(con, plan)
    # A build that leaves out a model it needed (a subset chosen in the UI) is not recorded: the
    # next build recomputes what this one was meant to.
    selected, every = context.selected_asset_keys, _every_model()
    complete = set(every if needed is None else needed) <= selected
    context.log.info(
        f"dbt build: {plan.reason}; {len(selected & every)} of {len(every)} models run"
        + ("" if needed is None else f" ({len(needed)} downstream of changed inputs)")
    )
    cache = _parse_cache(warehouse.work_path)
    target_path = os.environ.get("DBT_TARGET_PATH")
    if (cache / PARTIAL_PARSE).exists():
        os.environ["DBT_TARGET_PATH"] = str(cache)  # dagster-dbt copies the state from here
    try:
        invocation = dbt.cli(build_args(full_refresh=plan.full_refresh), context=context)
        # dbt now runs in its own process: import the later steps' libraries meanwhile
        preload.start()
        yield from invocation.stream()
    finally:
        if target_path is None:
            os.environ.pop("DBT_TARGET_PATH", None)
        else:
            os.environ["DBT_TARGET_PATH"] = target_path
        with warehouse.connect() as con:
            build_plan.clear(con)
    built_at = dt.datetime.now(dt.UTC)
    if complete:
        with warehouse.connect() as con:
            build_plan.record(con, plan, built_at)
            changed_sources.record(con, sources, built_at)
    else:
        context.log.warning("not every model this build needed was selected: build not recorded")
    parsed = invocation.target_path / PARTIAL_PARSE
    if parsed.exists():
        cache.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(parsed, cache / PARTIAL_PARSE)
    # this invocation's own target folder (dagster-dbt makes one per run) is kept only when dbt
    # failed, for its logs
    shutil.rmtree(invocation.target_path, ignore_errors=True)
