"""The dbt command line of the Dagster build."""

from dagster_project.transformation.dbt_args import build_args


def test_the_build_writes_no_json_artifacts_and_passes_selection_and_full_refresh():
    assert build_args() == ["build", "--no-write-json", "--log-level-file", "info"]
    assert build_args(select="tag:daily", full_refresh=True) == [
        "build", "--no-write-json", "--log-level-file", "info", "--select", "tag:daily",
        "--full-refresh",
    ]  # fmt: skip
