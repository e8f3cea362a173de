"""The process pools that draw the plots and render the PDFs, on every core.

Their workers are forked from the pipeline's process, which has imported matplotlib and reportlab
while dbt built (`preload.py`), so they start at once. A forked child inherits every object of its
parent, garbage included: a DuckDB connection left in a reference cycle, collected in the child,
closes a database whose threads exist only in the parent, and the child dies (a segmentation fault
in CI, 2026-12-04, while a worker rendered a PDF). So the garbage collector's objects are frozen
across the fork (`gc.freeze`, as Python's documentation advises before a fork): a worker collects
only what it made itself, and the parent collects its own garbage when the pool is done.
"""

import gc
import multiprocessing as mp
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

CORES = os.cpu_count() or 1


@contextmanager
def render_pool() -> Iterator[ProcessPoolExecutor]:
    """A pool of one worker per core, forked (its workers start at its first task)."""
    # A process that froze its imports at its start (frozen_imports.py) keeps them frozen, with
    # what this freezes: it ends after its run. Any other unfreezes all when the pool is done.
    frozen_before = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        with ProcessPoolExecutor(max_workers=CORES, mp_context=mp.get_context("fork")) as pool:
            yield pool
    finally:
        if not frozen_before:
            gc.unfreeze()
