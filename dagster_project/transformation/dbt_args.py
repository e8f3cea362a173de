"""Pure functions building dbt command lines (unit-tested)."""


def build_args(select: str | None = None, full_refresh: bool = False) -> list[str]:
    """`dbt build` arguments; one build per run (dagster-dbt costs ~4 s per invocation)."""
    args = ["build"]
    if select:
        args += ["--select", select]
    if full_refresh:
        args.append("--full-refresh")
    return args
