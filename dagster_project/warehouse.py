"""Where the warehouse lives, short-lived DuckDB connections, and the atomic publish for readers.

A run writes the working file (data/work/warehouse.duckdb). Readers use the published copy
(data/warehouse.duckdb), replaced atomically only after a complete run, so an analyst never sees
a half-written run and never blocks the pipeline (DuckDB allows one writing process; STACK.md).
One run writes the working file at a time: each holds the file's lock (flock) while it runs.
"""

import errno
import fcntl
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb

from dagster_project.deal import PROJECT_ROOT

DATA_DIR = PROJECT_ROOT / "data"


def work_path() -> Path:
    return Path(os.environ.get("CAOT_WAREHOUSE_WORK") or DATA_DIR / "work" / "warehouse.duckdb")


def published_path() -> Path:
    return Path(os.environ.get("CAOT_WAREHOUSE") or DATA_DIR / "warehouse.duckdb")


def input_dir() -> Path:
    return Path(os.environ.get("CAOT_INPUT_DIR") or DATA_DIR / "sample")


def isolated_environment(inputs: Path, folder: Path) -> dict[str, str]:
    """The environment of a pipeline run on `inputs` with its own warehouse, reports, Great
    Expectations project and Dagster instance under `folder` (a shelf's deal files beside the
    inputs, `<inputs>/../deals/`, when there are)."""
    home = folder / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PROJECT_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    deals = inputs.parent / "deals"
    return {
        **os.environ,
        **({"CAOT_DEALS_DIR": str(deals)} if deals.is_dir() else {}),
        "DAGSTER_HOME": str(home),
        "CAOT_INPUT_DIR": str(inputs),
        "CAOT_WAREHOUSE_WORK": str(folder / "work" / "warehouse.duckdb"),
        "CAOT_WAREHOUSE": str(folder / "warehouse.duckdb"),
        "CAOT_REPORTS_DIR": str(folder / "reports"),
        "CAOT_GX_DIR": str(folder / "gx"),
        "DBT_PROJECT_DIR": str(PROJECT_ROOT / "dbt"),
        "DBT_PROFILES_DIR": str(PROJECT_ROOT / "dbt"),
    }


def memory_limit() -> str:
    """DuckDB's memory for the pipeline's own work (ingestion, checks, publication): beyond it,
    joins, sorts and aggregates spill to disk beside the warehouse, so a shelf of trusts runs on a
    small machine. dbt's models have 6GB unless this variable or CAOT_DBT_MEMORY_LIMIT is set
    (dbt/profiles.yml)."""
    return os.environ.get("CAOT_DUCKDB_MEMORY_LIMIT", "4GB")


@contextmanager
def connect(path: Path | str, read_only: bool = False):
    path = Path(path)
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


def insert_rows(con, table: str, rows) -> None:
    """Insert `rows` (each a value for every column of `table`, in the table's order) with one
    statement: each column's values go in as one list, unnested side by side, where DuckDB's
    `executemany` runs one insert per row (about a millisecond each)."""
    rows = list(rows)
    if not rows:
        return
    described = con.execute(f"describe {table}").fetchall()
    columns = [list(values) for values in zip(*rows, strict=True)]
    if len(columns) != len(described):
        raise ValueError(f"{table} has {len(described)} columns, the rows {len(columns)}")
    for (name, *_), values in zip(described, columns, strict=True):
        # a list takes one type: a float among decimals would make every value a double
        if any(isinstance(value, float) for value in values):
            raise TypeError(f"{table}.{name}: a float among the values (amounts are Decimal)")
    types = [column_type for _name, column_type, *_ in described]
    unnested = ", ".join(f"unnest(${i}::{kind}[])" for i, kind in enumerate(types, 1))
    con.execute(f"insert into {table} select {unnested}", columns)


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


def restore_work(work: Path, published: Path) -> None:
    """A run starts from the published history when the working file is missing (a fresh
    working folder, or one cleaned by hand), never from an empty warehouse."""
    if not work.exists() and published.exists():
        _copy_over(published, work)  # its folder created beside the copy (_copy_aside)


def publish(work: Path, published: Path) -> Path:
    """Publish the finished working warehouse (publishing, with nothing to do beside the copy)."""
    with publishing(work, published):
        pass
    return published


@contextmanager
def publishing(work: Path, published: Path):
    """Publish the finished working warehouse while the block runs: checkpointed, copied beside
    the published file, and renamed over it once the block and the copy are both done (atomic:
    readers see the old file or the new one). The copy is the kernel's (sendfile) and runs in a
    thread, so that it overlaps the block's work (the reports, rendered from the same finished
    file, read-only) instead of following it. A failure of the block or of the copy leaves the
    published file as it was; a failed copy is a PublishError once the block is done."""
    with connect(work) as con:
        con.execute("checkpoint")
    temporary = published.with_name(published.name + ".tmp")
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="publish-warehouse") as pool:
        copying = pool.submit(_copy_aside, work, temporary, published)
        try:
            yield
        except BaseException:
            wait([copying])
            _discard(temporary)
            raise
        failure = copying.exception()
    if failure is None:
        try:
            os.replace(temporary, published)
            return
        except OSError as error:
            failure = error
    _discard(temporary)
    raise PublishError(
        f"could not publish the warehouse to {published}: "
        f"{getattr(failure, 'strerror', None) or failure}; "
        "the previously published warehouse is unchanged"
    ) from failure


def _copy_over(source: Path, target: Path) -> None:
    """`target` becomes a copy of `source` at once, or stays as it was (no partial copy left)."""
    temporary = target.with_name(target.name + ".tmp")
    _copy_aside(source, temporary, target)
    try:
        os.replace(temporary, target)
    except OSError:
        _discard(temporary)
        raise


def _copy_aside(source: Path, temporary: Path, target: Path) -> None:
    """A copy of `source` at `temporary`, beside `target` (its folder created); nothing is left
    when the copy fails."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, temporary)
    except OSError as error:
        _discard(temporary)
        if error.errno == errno.ENOSPC:
            raise OSError(error.errno, f"no space left on the device for {target}") from error
        raise


def _discard(temporary: Path) -> None:
    with suppress(OSError):  # the folder itself may be what is missing or unwritable
        temporary.unlink(missing_ok=True)


# the errors of a file system that cannot hard-link these two paths (another device, links not
# supported or not allowed, too many links): the file is copied instead
CANNOT_LINK = {errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK}


def share_file(source: Path | str, target: Path | str) -> None:
    """`target` becomes the file `source`: a hard link (a copy where the file system cannot link),
    made beside it and renamed over it, so a file `target` was, shared or not, is replaced, never
    written into. For the reports' files that are written once and never changed in place: an
    unchanged PDF, an earlier auditor's package, the Data Docs in a package. A later write to
    either path must replace the file (write a new one), never rewrite it."""
    target = Path(target)  # shutil.copytree (share_tree) passes strings
    temporary = target.with_name(target.name + ".sharing")
    temporary.unlink(missing_ok=True)
    try:
        os.link(source, temporary)
    except OSError as error:
        if error.errno not in CANNOT_LINK:
            raise
        shutil.copyfile(source, temporary)
    os.replace(temporary, target)


def share_tree(source: Path, target: Path) -> None:
    """A folder's files shared (share_file) into `target`, created or merged into."""
    shutil.copytree(source, target, copy_function=share_file, dirs_exist_ok=True)


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
