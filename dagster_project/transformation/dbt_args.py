"""Pure functions building dbt command lines (unit-tested)."""


def build_args(select: str | None = None, full_refresh: bool = False) -> list[str]:
    """`dbt build` arguments; one build per run (dagster-dbt costs ~4 s per invocation). The build
    writes no manifest.json or run_results.json (about 0.25 s): Dagster records each model's and
    test's result from dbt's event stream, and the invocation's dbt.log and compiled SQL stay."""
    args = ["build", "--no-write-json"]
    if select:
        args += ["--select", select]
    if full_refresh:
        args.append("--full-refresh")
    return args
