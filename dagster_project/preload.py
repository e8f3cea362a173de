"""Import the libraries of the later steps while the work before them runs outside Python's lock.

The Section 2.3 validation and the servicing criteria check import Great Expectations (with SciPy
and Altair: 2-5 s of CPU) and the reports step imports matplotlib and reportlab (0.4-0.7 s).
Imported inside their steps, they lie on the run's critical path; imported in a thread while the
monthly tapes load (DuckDB) or while the build step waits for dbt (its own process), they are
ready when their steps start. A module that fails to import here is imported again by its step,
which reports the error.
"""

import importlib
import os
import sys
import threading

from dagster_project.quality import validation

LATER_STEPS = ("dagster_project.reports.writer",)
# Imported by the calling thread before the thread starts: modules the thread would import and
# this one calls into meanwhile. SQLAlchemy's ORM (Great Expectations imports it) registers its
# inspection of every object as its import begins; Dagster's storage, selecting in this thread,
# then called into the half-imported module and the step failed ("partially initialized module
# 'sqlalchemy.orm.exc'", in CI on 2026-12-04). About 0.3 s, while dbt or DuckDB works.
SHARED_MODULES = ("sqlalchemy.orm",)


# The thread's scheduling priority (Linux nice value, per thread there): lowest, so that the imports
# take the CPU dbt and DuckDB leave idle rather than slowing the build they wait for (a month's dbt
# build 4.6 -> 4.3 s measured). A step that needs a module before the thread is done waits on
# the import lock as before, and then the thread has the CPU to itself.
NICENESS = 19


def _import_later_steps() -> None:
    if sys.platform == "linux":  # elsewhere a thread id is not a process id for setpriority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
    try:
        validation.great_expectations()
        for name in LATER_STEPS:
            importlib.import_module(name)
    except Exception:  # noqa: BLE001, S110 - the step that needs the module raises it again
        pass


_started: list[threading.Thread] = []


def start() -> threading.Thread:
    """Start importing in the background, once per process; returns the (daemon) thread."""
    if not _started:
        for name in SHARED_MODULES:
            importlib.import_module(name)
        thread = threading.Thread(
            target=_import_later_steps, name="import-later-steps", daemon=True
        )
        thread.start()
        _started.append(thread)
    return _started[0]
