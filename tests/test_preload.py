"""The later steps' libraries are imported in a thread while the tapes load or dbt builds."""

import os
import sys
import threading

from conftest import python_output

from dagster_project import preload
from dagster_project.quality import validation


def test_the_later_steps_modules_are_imported_in_a_background_thread(tmp_path, monkeypatch):
    (tmp_path / "caot_later_step.py").write_text(
        "import os, threading\nTHREAD = threading.current_thread().name\n"
        "NICE = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "caot_later_step", raising=False)
    monkeypatch.setattr(preload, "LATER_STEPS", ("caot_later_step",))
    monkeypatch.setattr(preload, "_started", [])
    loaded = []
    monkeypatch.setattr(validation, "great_expectations", lambda: loaded.append("gx"))
    thread = preload.start()
    thread.join(timeout=30)
    assert loaded == ["gx"]
    assert sys.modules["caot_later_step"].THREAD == thread.name != threading.current_thread().name
    if sys.platform == "linux":  # the imports take only the CPU the build leaves idle
        own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert sys.modules["caot_later_step"].NICE == preload.NICENESS > own
    # a second start (the build step, after the pipeline started it for the validation) is a no-op
    assert preload.start() is thread
    assert loaded == ["gx"]


def test_a_module_that_fails_to_import_is_left_to_its_step(tmp_path, monkeypatch):
    (tmp_path / "caot_broken_step.py").write_text("raise ImportError('missing library')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(preload, "LATER_STEPS", ("caot_broken_step",))
    monkeypatch.setattr(preload, "_started", [])
    monkeypatch.setattr(validation, "great_expectations", lambda: None)
    failures = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    preload.start().join(timeout=30)
    assert failures == []  # nothing printed from the thread
    assert "caot_broken_step" not in sys.modules  # the step's own import raises the error


def test_the_pipeline_command_imports_no_later_step_library_before_its_first_run():
    # They are the preload thread's work, beside DuckDB's and dbt's; imported by the command line
    # itself they would lengthen every run's start (pandas and numpy: about 0.25 s).
    later = ["great_expectations", "matplotlib", "numpy", "pandas", "reportlab"]
    code = (
        "import sys, dagster_project.pipeline\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({later!r})))"
    )
    out = python_output(code)
    assert out.strip() == "[]"


def test_the_calling_thread_can_use_sqlalchemy_while_the_thread_imports():
    """Dagster's storage selects with SQLAlchemy while the thread imports Great Expectations (and
    with it SQLAlchemy's ORM): no call may meet a half-imported module."""
    # Each call lets go of the interpreter after it (time.sleep(0)), as Dagster's storage does
    # on every database read: a loop that never lets go starves the thread, which runs at the
    # lowest priority, and the test took 52 s instead of 3.
    code = (
        "import time, dagster, sqlalchemy\n"
        "from dagster_project import preload\n"
        "thread, calls, errors = preload.start(), 0, set()\n"
        "while thread.is_alive():\n"
        "    calls += 1\n"
        "    try:\n"
        "        sqlalchemy.select(1)\n"
        "    except Exception as error:\n"
        "        errors.add(repr(error))\n"
        "    time.sleep(0)\n"
        "print(calls > 1000, sorted(errors))\n"
    )
    out = python_output(code, timeout=300)
    assert out.strip() == "True []"
