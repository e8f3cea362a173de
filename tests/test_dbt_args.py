"""The dbt command line of a run, from its partitions."""

import json
import os

from dagster_project.partitions import TrustPeriod, split
from dagster_project.transformation.dbt_args import build_args, build_environment, rebuild_window


def test_a_run_without_partitions_rebuilds_everything():
    assert build_args(None) == ["build", "--full-refresh", "--exclude", "test_type:unit"]
    assert build_environment(None) == {"CAOT_REBUILD_FROM": None}  # no window, whatever is set


def test_a_run_recomputes_each_trust_from_its_first_period_of_the_run():
    keys = split(["caot-2015-4|2018-11", "caot-2015-4|2018-09", "caot-2014-4|2018-11"])
    assert rebuild_window(keys) == {"caot-2014-4": "2018-11", "caot-2015-4": "2018-09"}
    assert build_args(keys) == ["build", "--exclude", "test_type:unit"]  # no --vars: no re-parse
    assert json.loads(build_environment(keys)["CAOT_REBUILD_FROM"]) == {
        "caot-2014-4": "2018-11",
        "caot-2015-4": "2018-09",
    }


def test_one_partition_is_one_trust_and_one_period():
    assert build_environment([TrustPeriod("caot-2015-4", "2016-06")]) == {
        "CAOT_REBUILD_FROM": '{"caot-2015-4": "2016-06"}'
    }


def test_dbt_s_environment_is_the_window_while_dbt_starts_then_as_it_was(monkeypatch):
    from dagster_project.defs.transformation import environment_of_dbt

    monkeypatch.setenv("CAOT_REBUILD_FROM", "left by a shell")
    with environment_of_dbt({"CAOT_REBUILD_FROM": None}):
        assert "CAOT_REBUILD_FROM" not in os.environ
    assert os.environ["CAOT_REBUILD_FROM"] == "left by a shell"
    monkeypatch.delenv("CAOT_REBUILD_FROM")
    with environment_of_dbt({"CAOT_REBUILD_FROM": '{"caot-2015-4": "2016-06"}'}):
        assert os.environ["CAOT_REBUILD_FROM"] == '{"caot-2015-4": "2016-06"}'
    assert "CAOT_REBUILD_FROM" not in os.environ
