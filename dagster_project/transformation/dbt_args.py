"""The dbt command line of a run, from its partitions: a pure function (tests/test_dbt_args.py)."""

import json

from dagster_project.partitions import TrustPeriod


def rebuild_window(keys: list[TrustPeriod]) -> dict[str, str]:
    """Each trust's first Collection Period among the run's partitions: the loan-level models
    recompute that period and every later one of the trust (dbt/macros/incremental.sql)."""
    window: dict[str, str] = {}
    for key in keys:
        if key.deal_id not in window or key.period < window[key.deal_id]:
            window[key.deal_id] = key.period
    return dict(sorted(window.items()))


# dbt's unit tests check the models' logic on fixed inputs: the test suite runs them
# (tests/test_dbt_unit_tests.py), a servicing run does not (as dbt recommends for production)
NO_UNIT_TESTS = ["--exclude", "test_type:unit"]


def build_args(keys: list[TrustPeriod] | None) -> list[str]:
    """`dbt build` for a run: with partitions, the window of their trusts' periods as `--vars`;
    without, a full refresh (every row of every trust recomputed, the tables recreated)."""
    if keys is None:
        return ["build", "--full-refresh", *NO_UNIT_TESTS]
    return ["build", "--vars", json.dumps({"rebuild_from": rebuild_window(keys)}), *NO_UNIT_TESTS]
