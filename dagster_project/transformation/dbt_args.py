"""The dbt command line of a run, from its partitions: pure functions (tests/test_dbt_args.py)."""

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

# The window reaches dbt as an environment variable, read only while dbt executes (the macro
# rebuild_from): a `--vars` of its own in every run would make dbt parse the whole project again.
WINDOW_VARIABLE = "CAOT_REBUILD_FROM"


def build_args(keys: list[TrustPeriod] | None) -> list[str]:
    """`dbt build` for a run: with partitions, incremental (the window: build_environment);
    without, a full refresh (every row of every trust recomputed, the tables recreated)."""
    if keys is None:
        return ["build", "--full-refresh", *NO_UNIT_TESTS]
    return ["build", *NO_UNIT_TESTS]


def build_environment(keys: list[TrustPeriod] | None) -> dict[str, str | None]:
    """The environment of that `dbt build`: the window of the partitions' trusts and periods as
    CAOT_REBUILD_FROM (JSON); without partitions, none (None: unset, whatever the caller's)."""
    if keys is None:
        return {WINDOW_VARIABLE: None}
    return {WINDOW_VARIABLE: json.dumps(rebuild_window(keys))}
