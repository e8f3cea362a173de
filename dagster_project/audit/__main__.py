"""Write an auditor's package from the published warehouse:

    python -m dagster_project.audit --deal-id caot-2015-4 --period 2016-01 --out DIR
        [--seed N] [--sample-size N | --confidence 0.95 --tolerable 0.05 --expected 0.025]

DIR/<period>/ holds the package and DIR/<period>.zip the same files (audit/package.py)."""

import argparse
import sys
from fractions import Fraction
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deal-id", required=True)
    parser.add_argument("--period", required=True, help="the Collection Period, YYYY-MM")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--warehouse", type=Path, default=None, help="default: the published one")
    parser.add_argument("--seed", type=int, default=None, help="default: the Closing Date")
    parser.add_argument("--sample-size", type=int, default=None, help="a fixed count")
    parser.add_argument("--confidence", type=Fraction, default=Fraction(95, 100))
    parser.add_argument("--tolerable", type=Fraction, default=Fraction(5, 100))
    parser.add_argument("--expected", type=Fraction, default=Fraction(25, 1000))
    args = parser.parse_args(argv)

    import duckdb

    from dagster_project.audit.package import SamplePlan, write_package
    from dagster_project.deal import DealFileError, shelf_deal
    from dagster_project.reports.writer import reports_dir
    from dagster_project.warehouse import published_path

    try:
        deal = shelf_deal(args.deal_id)
        plan = SamplePlan(args.confidence, args.tolerable, args.expected, args.sample_size,
                          args.seed)  # fmt: skip
        con = duckdb.connect(str(args.warehouse or published_path()), read_only=True)
        try:
            docs = reports_dir() / "data_docs"
            counts = write_package(con, deal, args.period, args.out / args.period, plan, docs)
        finally:
            con.close()
    except (DealFileError, ValueError, duckdb.Error) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{args.out / args.period}/ and {args.period}.zip: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
