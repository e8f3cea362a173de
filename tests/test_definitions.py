"""The Dagster definitions: Dagster's own check of the project layout passes from a shell that has
not activated the virtual environment, and the product uses only public Dagster APIs."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_dg_check_defs_passes_without_the_environment_on_path(tmp_path):
    env = {
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "PATH": "/usr/bin:/bin",  # no dbt, no dagster on PATH: the definitions find their own
        "DAGSTER_HOME": str(tmp_path),
    }
    result = subprocess.run(
        [str(Path(sys.executable).parent / "dg"), "check", "defs"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "All definitions loaded successfully" in result.stdout + result.stderr


def test_no_private_dagster_or_dbt_module_is_imported():
    private = re.compile(r"^\s*(from|import)\s+(dagster|dagster_dbt|dbt)(\.\w+)*\._", re.M)
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("dagster_project", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if private.search(path.read_text()) or "dagster._" in path.read_text()
    ]
    assert offenders == []


def test_the_command_line_help_needs_no_dbt_manifest():
    """`--help` answers before anything reads dbt's manifest (a fresh clone has none until
    `dbt parse`): it imports neither the definitions nor dbt."""
    code = (
        "import sys\n"
        "from dagster_project.pipeline import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit as done:\n"
        "    print('exit', done.code)\n"
        "print('loaded:', sorted(m for m in sys.modules if m.startswith(('dagster_project.defs', "
        "'dagster_project.definitions', 'dbt', 'dagster_dbt'))))\n"
    )
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "--rebuild" in printed and "exit 0" in printed
    assert "loaded: []" in printed


def test_one_partitioned_asset_loads_the_monthly_tapes():
    """Dagster records every (trust, Collection Period) of a run's range once per partitioned
    asset (a planned and a materialization event each): the monthly deliveries are one asset,
    upstream of the dbt staging of its three tables."""
    import dagster as dg

    from dagster_project.definitions import defs

    graph = defs().resolve_asset_graph()
    tapes = dg.AssetKey(["raw", "monthly_tapes"])
    partitioned = [key for key in graph.get_all_asset_keys() if graph.get(key).is_partitioned]
    assert partitioned == [tapes]
    for model in ("stg_servicer__loan_status", "stg_servicer__payment_transactions",
                  "stg_ingestion__deliveries"):  # fmt: skip
        (key,) = [k for k in graph.get_all_asset_keys() if k.path[-1] == model]
        assert graph.get(key).parent_keys == {tapes}
