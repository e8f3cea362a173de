"""Run the Dagster jobs from the command line: `python -m dagster_project.pipeline`.

    python -m dagster_project.pipeline                      every trust's delivered periods
    python -m dagster_project.pipeline --period 2018-11     that month of every trust delivering it
    python -m dagster_project.pipeline --trust caot-2015-4 --period 2018-11
    python -m dagster_project.pipeline --rebuild [--accept-deal-changes]

The first three launch monthly_servicing_run, the job the schedule, the sensor and the UI run,
as one run over the partitions (a backfill of the trusts and periods asked for); --rebuild
launches rebuild_warehouse. Each run is recorded in DAGSTER_HOME under its job's name, so the UI
shows the history. Exit status: 0 done; 3 published, but a delivery was rejected (its rows are
in raw.quarantine, the certificates that depend on it withheld) or a trust held (its Receivable
Schedule or deal file changed and not applied, its certificates withheld); 1 failed; 2 bad
arguments, or a deal file that cannot be read; 75 another run holds the warehouse (try again, or
--wait).
"""

import argparse
import sys
from contextlib import nullcontext


def parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m dagster_project.pipeline",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("--trust", action="append", metavar="DEAL_ID", help="only this trust")
    parser.add_argument("--period", action="append", metavar="YYYY-MM", help="only this period")
    parser.add_argument(
        "--rebuild", action="store_true", help="recompute everything from what is loaded"
    )
    parser.add_argument(
        "--accept-deal-changes",
        action="store_true",
        help="with --rebuild: apply deal files that changed since their certificates",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="if another run holds the warehouse, wait this long for it (default: fail at once)",
    )
    args = parser.parse_args(argv)
    if args.accept_deal_changes and not args.rebuild:  # a monthly run never applies them
        parser.error("--accept-deal-changes applies changed deal files with --rebuild only")
    return args


def main(argv=None, instance=None) -> int:
    args = parse(argv)  # before the imports below: --help works before anything is built
    import dagster as dg

    from dagster_project.deal import DealFileError

    try:  # the definitions read the shelf's deal files (partitions.py), as the launch does
        from dagster_project.launch import launch

        with dg.DagsterInstance.get() if instance is None else nullcontext(instance) as owned:
            return launch(args, owned)
    except DealFileError as error:
        print(f"a deal file of the shelf cannot be read: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
