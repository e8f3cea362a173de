"""Start-up of the short-lived processes (the pipeline's command line, dbt's waiting process):
their libraries' objects are kept out of the garbage collector's walks.

A full collection walks every object the collector tracks; after importing Dagster, dbt and the
project there are about 420,000, so each walk took 0.1-0.3 s, and a monthly run made eight of them
(1.1 s of the pipeline's process, 0.36 s of dbt's). Imports leave almost no garbage (a few dozen
cycles), so the collector is off while they run and their objects are then frozen (`gc.freeze`):
never walked again, and never freed, which a process that ends after its run does not need.

After the freeze the collector also runs less often (THRESHOLDS): the libraries imported later
(Great Expectations, in preload.py's thread) are still walked by each full collection, and
Python's default thresholds (700, 10, 10) ran six in a month, 0.1-0.2 s each; at (10,000, 10, 10)
a month runs none, for little more memory (the young garbage waits for 10,000 allocations, not
700). A month 9.64 -> 9.45 s (four pairs).
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (10_000, 10, 10)


def begin() -> None:
    """Before the imports: no collection while they run."""
    gc.disable()


def end() -> None:
    """After them: what they made is frozen; collections walk only what comes later."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """The block's imports (and whatever else it makes) frozen at its end."""
    begin()
    try:
        yield
    finally:
        end()
