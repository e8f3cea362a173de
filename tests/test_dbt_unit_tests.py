"""dbt's unit tests (dbt/models/**/_*unit_tests.yml: the waterfall's steps worked by hand) pass on
the built warehouse, and a copy of one with a wrong expectation fails (one dbt invocation)."""

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

DBT = str(Path(sys.executable).parent / "dbt")
ROOT = Path(__file__).resolve().parents[1]


def _dbt_unit_tests(project: Path, warehouse: Path, scratch: Path) -> subprocess.CompletedProcess:
    copy = scratch / "warehouse.duckdb"
    shutil.copyfile(warehouse, copy)  # the unit tests read the parents' column types
    return subprocess.run(
        [DBT, "test", "--select", "test_type:unit", "--target-path", str(scratch / "target"),
         "--log-path", str(scratch / "logs")],
        cwd=project,
        # make exports DBT_PROJECT_DIR: point it at the project under test
        env={**os.environ, "CAOT_WAREHOUSE_WORK": str(copy), "DBT_PROJECT_DIR": str(project),
             "DBT_PROFILES_DIR": str(project)},
        capture_output=True,
        text=True,
    )  # fmt: skip


def test_the_dbt_unit_tests_pass_and_a_wrong_expectation_fails(built_warehouse, tmp_path):
    project = tmp_path / "dbt"
    shutil.copytree(ROOT / "dbt", project, ignore=shutil.ignore_patterns("target", "logs"))
    tests = project / "models" / "intermediate" / "_waterfall_unit_tests.yml"
    spec = yaml.safe_load(tests.read_text())
    wrong = copy.deepcopy(spec["unit_tests"][0])
    wrong["name"] = f"{wrong['name']}_one_cent_off"
    wrong["expect"]["rows"][0]["balance_end_cents"] += 1
    spec["unit_tests"].append(wrong)
    tests.write_text(yaml.safe_dump(spec))
    result = _dbt_unit_tests(project, built_warehouse["published"], tmp_path)
    assert result.returncode == 1, result.stdout[-3000:]
    lines = result.stdout.splitlines()
    passed = [line for line in lines if " PASS int_waterfall__distribution_dates::" in line]
    assert len(passed) == len(spec["unit_tests"]) - 1 and "ERROR=1 " in result.stdout, result.stdout
    failed = [line for line in lines if "FAIL 1" in line]
    assert len(failed) == 1 and wrong["name"] in failed[0]
    assert "differs from" in result.stdout
