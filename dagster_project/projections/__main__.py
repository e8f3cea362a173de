"""Project a trust of the published warehouse under the scenarios of data/scenarios.yaml.

    .venv/bin/python -m dagster_project.projections --deal-id caot-2015-4
        [--period YYYY-MM] [--scenarios FILE] [--breakeven SCENARIO] [--out DIR]

From the cutoff pool (default) or the pool after Collection Period --period, every receivable is
projected under each scenario (projections/engine.py), the projected pool lines run through the
certificate's own waterfall (projections/waterfall.py), and each class gets its weighted average
life, principal window, final payment date and any principal loss. --breakeven: for each class,
the default rate (CDR, the scenario's other assumptions kept) at which it first takes a principal
loss, found by a bracketing search, and the cumulative net loss that rate produces. Writes
DIR/projections.duckdb (schema `projection`, every table keyed by scenario) and
DIR/projections.html; DIR defaults to the trust's report folder.
"""

import argparse
import sys
import time
from pathlib import Path

from dagster_project.deal import DealFileError, shelf_deal
from dagster_project.projections.analysis import ProjectionError, run_projection
from dagster_project.projections.report import write_report
from dagster_project.projections.scenarios import DEFAULT_FILE, ScenarioError, load_scenarios
from dagster_project.projections.starting_point import StartError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dagster_project.projections",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("--deal-id", required=True, help="a trust of the shelf")
    parser.add_argument("--period", help="start after this Collection Period (default: cutoff)")
    parser.add_argument("--scenarios", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--breakeven", metavar="SCENARIO", help="search each class's breakeven")
    parser.add_argument("--warehouse", type=Path, help="default: the published warehouse")
    parser.add_argument("--out", type=Path, help="default: data/reports/<deal_id>/projections")
    args = parser.parse_args(argv)
    from dagster_project.reports.writer import reports_dir
    from dagster_project.warehouse import published_path

    started = time.monotonic()
    try:
        deal = shelf_deal(args.deal_id)
        scenarios = load_scenarios(args.scenarios)
        result = run_projection(
            args.warehouse or published_path(), deal, scenarios, args.period, args.breakeven
        )
    except (DealFileError, ScenarioError, StartError, ProjectionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    out = args.out or reports_dir() / deal.deal_id / "projections"
    result.write(out / "projections.duckdb")
    write_report(result, out / "projections.html")
    for line in result.summary_lines():
        print(line)
    print(f"{out / 'projections.html'} ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
