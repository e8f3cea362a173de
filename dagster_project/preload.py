"""Import the libraries of the steps after the dbt build while dbt runs in its own process.

The servicing criteria check imports Great Expectations (with SciPy and Altair: 2-5 s of CPU) and
the reports step imports matplotlib and reportlab (0.4-0.7 s). Imported inside their steps, they
lie on the run's critical path; imported in a thread while the build step waits for dbt, they are
ready when their steps start. A module that fails to import here is imported again by its step,
which reports the error.
"""

import importlib
import threading

from dagster_project.quality import validation

LATER_STEPS = ("dagster_project.reports.writer",)


def _import_later_steps() -> None:
    try:
        validation.great_expectations()
        for name in LATER_STEPS:
            importlib.import_module(name)
    except Exception:  # noqa: BLE001, S110 - the step that needs the module raises it again
        pass


def start() -> threading.Thread:
    """Start importing in the background; returns the (daemon) thread."""
    thread = threading.Thread(target=_import_later_steps, name="import-later-steps", daemon=True)
    thread.start()
    return thread
