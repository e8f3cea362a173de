"""The short-lived processes keep their libraries' objects out of the garbage collector's walks."""

import gc

from conftest import python_output

from dagster_project import frozen_imports
from dagster_project.reports.render_pool import render_pool


def test_the_block_runs_without_collections_and_its_objects_end_frozen():
    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    try:
        with frozen_imports.frozen():
            assert not gc.isenabled()
            made = [[] for _ in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(made)
        assert gc.get_threshold() == frozen_imports.THRESHOLDS  # fewer collections afterwards
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        gc.enable()


def test_a_render_pool_unfreezes_only_in_a_process_that_had_frozen_nothing():
    with render_pool():
        assert gc.get_freeze_count() > 0  # across the fork (render_pool.py)
    assert gc.get_freeze_count() == 0
    gc.freeze()  # as the command line does after its imports
    try:
        before = gc.get_freeze_count()
        with render_pool():
            pass
        assert gc.get_freeze_count() >= before
    finally:
        gc.unfreeze()


def test_the_pipeline_command_freezes_its_imports_before_it_runs():
    # the command's own start (its __main__ block) up to its argument parsing; dbt's process is
    # not started
    code = (
        "import argparse, gc, runpy, sys\n"
        "from dagster_project.transformation import dbt_process\n"
        "dbt_process.start_early = lambda work: None\n"
        "seen = []\n"
        "def parse_args(self, *args, **kwargs):\n"
        "    seen.append((gc.isenabled(), gc.get_freeze_count(), gc.get_threshold()))\n"
        "    raise SystemExit(0)\n"
        "argparse.ArgumentParser.parse_args = parse_args\n"
        "try:\n"
        "    runpy.run_module('dagster_project.pipeline', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(seen)\n"
    )
    out = python_output(code)
    [(enabled, frozen, thresholds)] = eval(out)  # noqa: S307 - our own subprocess's printed list
    assert enabled
    assert frozen > 100_000  # Dagster's, dbt's and the project's objects
    assert thresholds == frozen_imports.THRESHOLDS
