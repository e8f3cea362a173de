"""Pure functions building dbt command lines (unit-tested)."""


def build_args(select: str | None = None, full_refresh: bool = False) -> list[str]:
    """`dbt build` arguments; one build per run (dagster-dbt costs ~4 s per invocation).

    The build writes no manifest.json or run_results.json (about 0.25 s): Dagster records each
    model's and test's result from dbt's event stream. Its dbt.log holds info-level lines (each
    node's start, result and error), not dbt's default debug level: formatting the debug events
    (every statement dbt sends) took about 1 s of a one-month build, for a file kept only when the
    build fails, beside the compiled SQL of every node."""
    args = ["build", "--no-write-json", "--log-level-file", "info"]
    if select:
        args += ["--select", select]
    if full_refresh:
        args.append("--full-refresh")
    return args
