"""Shared fixtures: a small generated deal, and a warehouse built from it by the real pipeline."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
DBT_DIR = ROOT / "dbt"
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")
os.environ.setdefault("DO_NOT_TRACK", "1")
SMALL_DEAL_RECEIVABLES = 800
DEAL_ID = "caot-2015-4"  # the sample deal's trust


# The modules that run the real pipeline several times, longest first: run before the rest, so
# that the workers end on short tests (pytest-xdist's worksteal hands a worker that runs out
# the end of another's queue).
LONG_FIRST = (
    "test_periods.py",
    "test_faults.py",
    "test_concurrent_runs.py",
    "test_public_filings.py",
    "test_operations.py",
    "test_shelf.py",
    "test_pipeline.py",
    "test_loan_level_reference.py",
)


def pytest_collection_modifyitems(items) -> None:
    def rank(item) -> int:
        name = item.path.name
        return LONG_FIRST.index(name) if name in LONG_FIRST else len(LONG_FIRST)

    items.sort(key=rank)  # stable: each module keeps its own order


def _manifest_is_current() -> bool:
    """Whether dbt/target/manifest.json is newer than every file it is parsed from (the rule of
    the Makefile's target, which `make test` has just applied)."""
    manifest = DBT_DIR / "target" / "manifest.json"
    if not manifest.exists():
        return False
    sources = [DBT_DIR / "dbt_project.yml"] + [
        path
        for folder in ("models", "macros", "tests", "seeds")
        for path in (DBT_DIR / folder).rglob("*")
        if path.is_file()
    ]
    return manifest.stat().st_mtime >= max(path.stat().st_mtime for path in sources)


def _dbt_parse() -> None:
    dbt = Path(sys.executable).parent / "dbt"
    subprocess.run([str(dbt), "parse", "--quiet"], cwd=DBT_DIR, check=True)


# The dbt manifest must exist and be current before dagster_project.definitions is imported
# (STACK.md trap 1): parsed by the main pytest process (before pytest-xdist starts its workers)
# unless it is.
if "PYTEST_XDIST_WORKER" not in os.environ and not _manifest_is_current():
    _dbt_parse()


def once_per_session(tmp_path_factory, name: str, make) -> Path:
    """`make(folder)` runs once for the whole test session, also when pytest-xdist runs it on
    several workers (the pattern of pytest-xdist's documentation: a file lock in the session's
    common temporary folder); every worker then reads the same folder, which tests leave as made."""
    common = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        common = common.parent  # the folder the workers' own temporary folders share
    folder = common / name
    with FileLock(str(folder) + ".lock"):
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".complete").touch()
    return folder


@pytest.fixture(scope="session")
def small_deal(tmp_path_factory) -> Path:
    """The inputs folder of a small sample deal (the shelf layout: <inputs>/<deal_id>/...)."""
    from dagster_project.generator.__main__ import generate

    def make(folder: Path) -> None:
        generate(folder / "sample", receivables=SMALL_DEAL_RECEIVABLES, seed=7, progress=False)

    return once_per_session(tmp_path_factory, "small_deal", make) / "sample"


def deliveries(inputs: Path, deal_id: str = DEAL_ID) -> Path:
    return inputs / deal_id / "deliveries"


FIRST_YEAR = 12  # periods: the fault and restatement scenarios run on them, to stay short


@pytest.fixture
def inputs(small_deal, tmp_path) -> Path:
    """The small deal's first year of deliveries."""
    folder = tmp_path / "inputs"
    shutil.copytree(small_deal, folder, ignore=shutil.ignore_patterns("deliveries"))
    periods = sorted(p.name for p in deliveries(small_deal).iterdir())[:FIRST_YEAR]
    for period in periods:
        shutil.copytree(deliveries(small_deal) / period, deliveries(folder) / period)
    return folder


def python_output(code: str, timeout: float = 120) -> str:
    """What `code` prints, run in a fresh interpreter (imports as a command has them)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=timeout
    ).stdout


def pipeline_env(paths: dict) -> dict[str, str]:
    return {
        "CAOT_INPUT_DIR": str(paths["input"]),
        "CAOT_WAREHOUSE_WORK": str(paths["work"]),
        "CAOT_WAREHOUSE": str(paths["published"]),
        "CAOT_REPORTS_DIR": str(paths["reports"]),
        "CAOT_GX_DIR": str(paths["gx"]),
    }


def run_pipeline(paths: dict, *argv: str) -> int:
    """Run the real command line (its jobs, in-process, in an ephemeral Dagster instance:
    pipeline_process.run_here) on the paths of `paths`; what it printed is printed again (pytest
    shows it when the test fails)."""
    from pipeline_process import run_here

    result = run_here(pipeline_env(paths), *argv)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.returncode


def warehouse_paths(inputs: Path, folder: Path) -> dict:
    """Where a test pipeline run reads its deal and writes its warehouse and reports."""
    return {
        "input": inputs,
        "work": folder / "work.duckdb",
        "published": folder / "warehouse.duckdb",
        "reports": folder / "reports",
        "gx": folder / "gx",
    }


@pytest.fixture(scope="session")
def built_warehouse(small_deal, tmp_path_factory) -> dict:
    """Run the whole pipeline (ingestion, dbt build, publish) on the small deal, once; tests
    read it (a test that runs the pipeline again works on a copy: `copied_warehouse`)."""

    def make(folder: Path) -> None:
        assert run_pipeline(warehouse_paths(small_deal, folder)) == 0

    return warehouse_paths(small_deal, once_per_session(tmp_path_factory, "built", make))


def copied_warehouse(built: dict, folder: Path) -> dict:
    """A private copy of the built warehouse, its reports and its validation results."""
    for key in ("work", "published"):
        if built[key].exists():
            shutil.copyfile(built[key], folder / built[key].name)
    for key in ("reports", "gx"):
        if built[key].exists():
            shutil.copytree(built[key], folder / built[key].name)
    return warehouse_paths(built["input"], folder)


@pytest.fixture(scope="session")
def model_runner(tmp_path_factory):
    """Compiled dbt models, runnable on scenario data (see tests/model_runner.py)."""
    from model_runner import ModelRunner

    return ModelRunner(tmp_path_factory.mktemp("compiled"))


@pytest.fixture(scope="session")
def reported_model_runner(tmp_path_factory):
    """The models compiled in reconciliation mode: pool inputs from raw.reported_pool_inputs."""
    from model_runner import ModelRunner

    return ModelRunner(tmp_path_factory.mktemp("compiled_reported"), '{"pool_inputs": "reported"}')
