"""The dbt command line of a run, from its partitions."""

import json

from dagster_project.partitions import TrustPeriod, split
from dagster_project.transformation.dbt_args import build_args, rebuild_window


def test_a_run_without_partitions_rebuilds_everything():
    assert build_args(None) == ["build", "--full-refresh", "--exclude", "test_type:unit"]


def test_a_run_recomputes_each_trust_from_its_first_period_of_the_run():
    keys = split(["caot-2015-4|2018-11", "caot-2015-4|2018-09", "caot-2014-4|2018-11"])
    assert rebuild_window(keys) == {"caot-2014-4": "2018-11", "caot-2015-4": "2018-09"}
    args = build_args(keys)
    assert args[:2] == ["build", "--vars"]
    assert json.loads(args[2]) == {
        "rebuild_from": {"caot-2014-4": "2018-11", "caot-2015-4": "2018-09"}
    }


def test_one_partition_is_one_trust_and_one_period():
    assert build_args([TrustPeriod("caot-2015-4", "2016-06")]) == [
        "build",
        "--vars",
        '{"rebuild_from": {"caot-2015-4": "2016-06"}}',
        "--exclude",
        "test_type:unit",
    ]


def test_only_the_newest_dbt_run_folders_are_kept(tmp_path):
    import os

    from dagster_project.defs.transformation import prune_run_folders

    for age in range(5):
        folder = tmp_path / f"warehouse_models-run{age}-abc"
        folder.mkdir()
        os.utime(folder, (1_000_000 - age, 1_000_000 - age))  # run0 the newest
    (tmp_path / "manifest.json").write_text("{}")  # dbt's own files stay
    prune_run_folders(tmp_path, "warehouse_models", keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "manifest.json",
        "warehouse_models-run0-abc",
        "warehouse_models-run1-abc",
    ]
