"""Where the warehouse lives, short-lived DuckDB connections, and the atomic publish for readers.

The pipeline writes a working file (data/work/warehouse.duckdb). Readers use the published copy
(data/warehouse.duckdb), replaced atomically only after a complete run, so an analyst never sees
a half-written run and never blocks the pipeline (DuckDB allows one writing process; STACK.md).
"""

import errno
import fcntl
import os
import shutil
import sys
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb

from dagster_project.deal import PROJECT_ROOT

DATA_DIR = PROJECT_ROOT / "data"


def work_path() -> Path:
    return Path(os.environ.get("CAOT_WAREHOUSE_WORK", DATA_DIR / "work" / "warehouse.duckdb"))


def published_path() -> Path:
    return Path(os.environ.get("CAOT_WAREHOUSE", DATA_DIR / "warehouse.duckdb"))


def input_dir() -> Path:
    return Path(os.environ.get("CAOT_INPUT_DIR", DATA_DIR / "sample"))


def memory_limit() -> str:
    """DuckDB's memory for the pipeline's work (dbt reads the same variable, dbt/profiles.yml):
    beyond it, joins, sorts and aggregates spill to disk beside the warehouse, so a shelf of
    deals runs on a small machine."""
    return os.environ.get("CAOT_DUCKDB_MEMORY_LIMIT", "4GB")


@contextmanager
def connect(path: Path | str, read_only: bool = False):
    path = Path(path)
    finish_restoring(path)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only)
    con.execute(f"set memory_limit = '{memory_limit()}'")
    try:
        yield con
    finally:
        con.close()


class WarehouseBusy(RuntimeError):
    """Another run holds the warehouse."""


@contextmanager
def run_lock(work: Path, wait_seconds: float = 0.0):
    """Hold the warehouse for one run: a second run waits up to `wait_seconds`, then fails with a
    clear message, and never interleaves its writes with the first one's. The lock is the
    kernel's (flock): a killed run releases it."""
    work.parent.mkdir(parents=True, exist_ok=True)
    handle = (work.parent / f"{work.name}.lock").open("a+")
    deadline = time.monotonic() + wait_seconds
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WarehouseBusy(
                        f"another run is writing {work} (lock {handle.name}); not starting"
                    ) from None
                time.sleep(0.5)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        yield
    finally:
        finish_restoring(work)  # the next run finds the working file whole
        handle.close()  # closing the file releases the lock


@contextmanager
def transaction(con):
    """All of the block's statements take effect, or none do."""
    con.execute("begin transaction")
    try:
        yield con
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")


def table_exists(con, schema: str, table: str) -> bool:
    """Whether the warehouse has the table (asked of the catalog: a query of a missing table
    would make DuckDB look for a Python variable of that name)."""
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = ? and table_name = ?",
            [schema, table],
        ).fetchone()[0]
    )


class PublishError(RuntimeError):
    """The warehouse or the reports could not be published; what was published stands."""


def isolated_environment(inputs: Path, folder: Path) -> dict[str, str]:
    """The environment of a pipeline run on `inputs` with its own warehouse, reports, Great
    Expectations project and Dagster instance under `folder` (benchmarks, fault tests)."""
    home = folder / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PROJECT_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "CAOT_INPUT_DIR": str(inputs),
        "CAOT_WAREHOUSE_WORK": str(folder / "work" / "warehouse.duckdb"),
        "CAOT_WAREHOUSE": str(folder / "warehouse.duckdb"),
        "CAOT_REPORTS_DIR": str(folder / "reports"),
        "CAOT_GX_DIR": str(folder / "gx"),
        "DBT_PROJECT_DIR": str(PROJECT_ROOT / "dbt"),
        "DBT_PROFILES_DIR": str(PROJECT_ROOT / "dbt"),
    }


def publish(work: Path, published: Path) -> Path:
    """Publish the finished working warehouse: checkpointed, then renamed over the published one
    (atomic: readers see the old file or the new one). The working file is then restored as a
    copy of the published one in the background (`restore_work`); whatever opens it next, in this
    process or after the run lock, waits for that copy. Renaming saves copying 270 MB while the
    build's writes are still going to disk (0.1 s to 1.6 s, measured), and the published file is
    the one DuckDB synced at its checkpoint."""
    finish_restoring(work)
    with connect(work) as con:
        con.execute("checkpoint")
    try:
        published.parent.mkdir(parents=True, exist_ok=True)
        if not Path(str(work) + ".wal").exists():  # everything is in the one file
            try:
                os.replace(work, published)
            except OSError as error:
                if error.errno != errno.EXDEV:
                    raise
            else:
                thread = threading.Thread(
                    target=_restore_reporting, args=(published, work), name="restore-work"
                )
                _restoring[_key(work)] = thread
                thread.start()
                return published
        _copy_over(work, published)  # another filesystem: a copy, renamed over the old file
    except OSError as error:
        raise PublishError(
            f"could not publish the warehouse to {published}: {error.strerror or error}; "
            "the previously published warehouse is unchanged"
        ) from error
    return published


def _copy_over(source: Path, target: Path) -> None:
    """`target` becomes a copy of `source` at once, or stays as it was (no partial copy left)."""
    temporary = target.with_name(target.name + ".tmp")
    try:
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    except OSError:
        with suppress(OSError):  # the folder itself may be what is missing or unwritable
            temporary.unlink(missing_ok=True)
        raise


_restoring: dict[str, threading.Thread] = {}  # working files being restored, by path


def _key(path: Path | str) -> str:
    return os.path.abspath(path)


def _restore_reporting(published: Path, work: Path) -> None:
    try:
        _copy_over(published, work)
    except OSError as error:
        print(
            f"could not restore the working warehouse {work} from {published}: "
            f"{error.strerror or error}; the next run restores it",
            file=sys.stderr,
        )


def finish_restoring(work: Path | None = None) -> None:
    """Wait for the background restore of `work` (of every working file when None)."""
    for key in [_key(work)] if work is not None else list(_restoring):
        thread = _restoring.pop(key, None)
        if thread is not None:
            thread.join()


def restore_work(work: Path, published: Path) -> None:
    """Make sure the working file exists: after a publish, it is a copy of the published file;
    a run stopped before that copy was done leaves it missing, and it is copied now (a run never
    starts from an empty warehouse while a published one holds the history)."""
    finish_restoring(work)
    if not work.exists() and published.exists():
        print(f"restoring the working warehouse {work} from {published}", flush=True)
        work.parent.mkdir(parents=True, exist_ok=True)
        _copy_over(published, work)


def publish_folder(build, target: Path):
    """Build a folder aside (`build(path)`), then swap it in whole for `target`: a failure leaves
    the previous folder as it was. Returns what `build` returned."""
    staging = target.with_name(target.name + ".building")
    previous = target.with_name(target.name + ".previous")
    try:
        shutil.rmtree(staging, ignore_errors=True)
        result = build(staging)
        shutil.rmtree(previous, ignore_errors=True)
        if target.exists():
            os.replace(target, previous)
        os.replace(staging, target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise PublishError(
            f"could not publish {target}: {error.strerror or error}; the previous version stands"
        ) from error
    shutil.rmtree(previous, ignore_errors=True)
    return result
