"""Run the whole pipeline in-process: `python -m dagster_project.pipeline`.

Loads the deal terms, the schedule and the market inputs, every monthly tape as one backfill run
of the partitioned asset, then validates the schedule against Section 2.3 (when it or the suites
changed), builds the dbt models and publishes the warehouse. Each step is a Dagster run recorded
in DAGSTER_HOME, so the UI shows the history. A month (one period to load on a loaded history)
is one run: its tape, the build and publication, as the monthly job runs them.
"""

if __name__ == "__main__":
    # The imports' objects are kept out of the garbage collector's walks (frozen_imports.py).
    from dagster_project import frozen_imports as _frozen_imports

    _frozen_imports.begin()
    # The command line starts dbt's process first, so that it imports dbt while this process
    # imports Dagster (about 2 s) and loads the tapes (transformation/dbt_process.py).
    from dagster_project import warehouse as _warehouse
    from dagster_project.transformation import dbt_process as _dbt_process

    _dbt_process.start_early(_warehouse.work_path())

import argparse
import atexit
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dagster as dg
import duckdb

from dagster_project import preload
from dagster_project import warehouse as warehouse_files
from dagster_project.checksums import sha256
from dagster_project.definitions import defs
from dagster_project.ingestion.assets import (
    deal_terms,
    market_inputs,
    monthly_tape,
    receivable_schedule,
    reference_inputs_loaded,
    tape_files,
)
from dagster_project.ingestion.ex102 import Ex102Error
from dagster_project.ingestion.partitions import COLLECTION_PERIODS
from dagster_project.ingestion.schemas import TAPE_SCHEMAS
from dagster_project.quality.eligibility_register import eligibility_register, register_current
from dagster_project.resources import WarehouseResource
from dagster_project.transformation import dbt_process
from dagster_project.transformation.dbt_assets import models_to_build, warehouse_models

QUIET = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


def _delivered_periods(warehouse) -> list[str]:
    folder = warehouse.deliveries_dir
    keys = COLLECTION_PERIODS.get_partition_keys()
    return [key for key in keys if (folder / key).is_dir()]


def pending(warehouse, periods: list[str]) -> list[str]:
    """The delivered periods whose files are not loaded as they are (new, restated, or rejected
    before): the others would change nothing, so the run does not pass them through Dagster."""
    work = Path(warehouse.work_path)
    if not work.exists():
        return periods
    with warehouse_files.connect(work, read_only=True) as con:
        try:
            loaded = set(
                con.execute(
                    "select scope, file_kind, sha256 from raw.deliveries where status = 'loaded'"
                ).fetchall()
            )
        except duckdb.Error:  # nothing loaded yet
            return periods
    delivered: dict[str, list] = {}
    out = []
    for period in periods:
        try:
            delivered[period] = tape_files(warehouse.deliveries_dir / period)
        except Ex102Error:  # the run reports it
            out.append(period)
    paths = [path for files in delivered.values() for _, path in files if path.exists()]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # hashlib frees the GIL
        hashes = dict(zip(paths, pool.map(sha256, paths), strict=True))
    for period, files in delivered.items():
        if any((period, schema.kind, hashes.get(path)) not in loaded for schema, path in files):
            out.append(period)
    return sorted(out, key=periods.index)


def contiguous(periods: list[str]) -> list[list[str]]:
    """Consecutive Collection Periods grouped: ['2016-01', '2016-02', '2016-04'] -> 2 groups."""
    keys = COLLECTION_PERIODS.get_partition_keys()
    stretches: list[list[str]] = []
    for period in sorted(periods, key=keys.index):
        if stretches and keys.index(period) == keys.index(stretches[-1][-1]) + 1:
            stretches[-1].append(period)
        else:
            stretches.append([period])
    return stretches


LOADED = (deal_terms, receivable_schedule, market_inputs, monthly_tape)


def build_assets(validating: bool = False) -> list:
    """What the build run holds: every asset but the loaded inputs and the Section 2.3 validation
    (unless `validating`: the schedule or its suites changed since the suites last ran), and the
    checks that are not per Collection Period (those run in single-partition runs; this run
    reports them per period)."""
    left_out = (*LOADED, *(() if validating else (eligibility_register,)))
    whole = [c for c in defs.asset_checks if all(s.partitions_def is None for s in c.check_specs)]
    return [a for a in defs.assets if a not in left_out] + whole


def rebuild_selection(
    assets_of_run: list, models: list[dg.AssetKey]
) -> tuple[dg.AssetSelection, list[dg.AssetKey]]:
    """The build run's selection when only `models` of the dbt models need rebuilding: them, the
    models the servicing criteria check (Dagster cannot place a check between two parts of the
    one dbt step; with no model to rebuild, none), and every other asset and check of the run.
    Returns the selection and the dbt models in it."""
    others = [a for a in assets_of_run if a is not warehouse_models]
    keys = [k for a in others if isinstance(a, dg.AssetsDefinition) for k in a.keys]
    checks = [a for a in others if isinstance(a, dg.AssetChecksDefinition)]
    checked = {
        key
        for check in checks
        for spec in check.check_specs
        for key in (spec.asset_key, *(dep.asset_key for dep in spec.additional_deps))
    }
    if models:
        models = sorted(set(models) | (checked & warehouse_models.keys))
    check_keys = [k for check in checks for k in check.check_keys]
    return dg.AssetSelection.assets(*keys, *models) | dg.AssetSelection.checks(*check_keys), models


def _changed_only(assets_of_run: list, warehouse) -> dg.AssetSelection | None:
    """The run's selection when it builds dbt models: only the models to rebuild (downstream of
    an input that changed since the last successful build), None (everything) otherwise."""
    if warehouse_models not in assets_of_run or eligibility_register in assets_of_run:
        return None  # a new schedule or new suites: the build recomputes everything anyway
    # a tape loaded in this run, before the build, changes its tables
    loading = {schema.table for schema in TAPE_SCHEMAS} if monthly_tape in assets_of_run else set()
    with warehouse_files.connect(warehouse.work_path) as con:
        models = models_to_build(con, changing=frozenset(loading))
    if models is None:
        return None
    selection, rebuilt = rebuild_selection(assets_of_run, models)
    print(f"dbt: {len(rebuilt)} of {len(warehouse_models.keys)} models "
          "to rebuild (downstream of changed inputs, or checked by the servicing criteria); the "
          "others are as the last build made them", flush=True)  # fmt: skip
    return selection


def run(
    periods: list[str] | None = None,
    instance: dg.DagsterInstance | None = None,
    wait_seconds: float = 0.0,
    ingest_only: bool = False,
) -> int:
    """The whole pipeline, holding the warehouse's run lock (a second run waits or fails)."""
    try:
        work = warehouse_files.work_path()
        with (
            # dbt's start-up while the inputs load, not when the build starts
            dbt_process.prestarted(work, wanted=not ingest_only),
            warehouse_files.run_lock(work, wait_seconds),
        ):
            if instance is not None:
                return _run(periods, instance, ingest_only)
            with dg.DagsterInstance.get() as owned:  # disposed (connections closed) on the way out
                return _run(periods, owned, ingest_only)
    except warehouse_files.WarehouseBusy as busy:
        print(f"not run: {busy}", file=sys.stderr)
        return 75  # EX_TEMPFAIL: try again when the other run has finished


def _report_gate(published: str) -> None:
    """Say which certificates are withheld and why (the quality gate of the published run)."""
    with warehouse_files.connect(published, read_only=True) as con:
        withheld = con.execute(
            "select distribution_date, withheld_reason from quality.certificate_gate "
            "where not is_publishable order by distribution_date"
        ).fetchall()
    for date, reason in withheld:
        print(f"certificate for {date} WITHHELD: {reason}", file=sys.stderr)


def _run(periods: list[str] | None, instance: dg.DagsterInstance, ingest_only: bool = False) -> int:
    # Resources read their paths from the environment now, not when the module was imported.
    warehouse = WarehouseResource(
        work_path=str(warehouse_files.work_path()),
        published_path=str(warehouse_files.published_path()),
        input_dir=str(warehouse_files.input_dir()),
    )
    resources = {**defs.resources, "warehouse": warehouse}
    warehouse_files.restore_work(Path(warehouse.work_path), Path(warehouse.published_path))
    periods = periods or _delivered_periods(warehouse)
    if not periods:
        print(f"no deliveries found under {warehouse.deliveries_dir}", file=sys.stderr)
        return 1
    steps = []
    reference_loaded = reference_inputs_loaded(warehouse)
    if reference_loaded:
        print("deal terms, schedule and market inputs already loaded as they are", flush=True)
    else:
        reference = [deal_terms, receivable_schedule, market_inputs]
        steps.append(("deal terms, schedule, market inputs", reference, {}))
    # The Section 2.3 suites run after the tapes are in, when the schedule or the suites may have
    # changed; Great Expectations is then imported while the tapes load (mostly DuckDB's work,
    # outside Python's lock; the steps before them are Python's).
    validating = not (reference_loaded and register_current(warehouse))
    # One backfill per stretch of consecutive periods to load: a period not delivered is not
    # loaded (the certificate gate withholds the ones after it until it arrives).
    to_load = pending(warehouse, periods)
    if len(to_load) < len(periods):
        print(f"{len(periods) - len(to_load)} periods already loaded as delivered", flush=True)

    def build_run() -> list:  # with the Section 2.3 validation if the loaded schedule needs it
        return build_assets(validating=not register_current(warehouse))

    if not ingest_only and not steps and not validating and len(to_load) == 1:
        # The monthly case, one period to load on a loaded history: its tape and the build in one
        # run, as the monthly job runs them (a run's start and end cost about 0.6 s).
        label = f"monthly tape {to_load[0]}, dbt build and publish"
        steps.append((label, lambda: [monthly_tape, *build_run()], {"partition_key": to_load[0]}))
    else:
        for stretch in contiguous(to_load):
            label = f"monthly tapes {stretch[0]}..{stretch[-1]} ({len(stretch)} periods)"
            partition_range = {
                "dagster/asset_partition_range_start": stretch[0],
                "dagster/asset_partition_range_end": stretch[-1],
            }
            steps.append((label, [monthly_tape], {"tags": partition_range}))
        if not ingest_only:
            steps.append(("dbt build and publish", build_run, {}))
        elif validating:
            steps.append(("Section 2.3 validation of the schedule", [eligibility_register], {}))
    for number, (label, assets_of_run, partitions) in enumerate(steps, start=1):
        started = time.perf_counter()
        print(f"[{number}/{len(steps)}] {label} ...", flush=True)
        if callable(assets_of_run):  # a build: decided now that the schedule is loaded
            assets_of_run = assets_of_run()
        elif validating and monthly_tape in assets_of_run:
            preload.start()
        result = dg.materialize(
            assets_of_run,
            instance=instance,
            resources=resources,
            raise_on_error=False,
            run_config=QUIET,
            selection=_changed_only(assets_of_run, warehouse),
            **partitions,
        )
        seconds = time.perf_counter() - started
        if not result.success:
            print(
                f"[{number}/{len(steps)}] FAILED after {seconds:.1f}s; see the messages above "
                f"or the Dagster UI",
                file=sys.stderr,
            )
            return 1
        print(f"[{number}/{len(steps)}] done in {seconds:.1f}s", flush=True)
    if ingest_only:
        print(f"loaded into {warehouse.work_path} (not built or published)")
        return 0
    print(f"warehouse published at {warehouse.published_path}")
    _report_gate(warehouse.published_path)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--period", action="append", help="load only these periods (YYYY-MM)")
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="if another run holds the warehouse, wait this long for it (default: fail at once)",
    )
    parser.add_argument(
        "--ingest-only", action="store_true", help="load the deliveries, then stop (benchmarks)"
    )
    args = parser.parse_args(argv)
    return run(args.period, wait_seconds=args.wait, ingest_only=args.ingest_only)


def exit_now(code: int) -> None:
    """End the process as a normal exit does (atexit handlers, flushed streams) but without the
    interpreter's teardown: freeing every object of dbt, Dagster, pandas and matplotlib one by one
    takes about 1.4 s after a monthly run, and every warehouse connection, the Dagster instance and
    every pool are already closed by their `with` blocks."""
    atexit._run_exitfuncs()  # what a normal exit runs first (logging.shutdown among them)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _frozen_imports.end()
    exit_now(main())
