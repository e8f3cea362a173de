"""A read-only SQL prompt on the published warehouse: `python -m dagster_project.sql [FILE]`.

    python -m dagster_project.sql                              the prompt (end a query with ;)
    python -m dagster_project.sql -c "select ..."              one query, printed
    python -m dagster_project.sql -c "select ..." --csv out.csv   one query, written as CSV
    python -m dagster_project.sql --max-rows 500               print up to 500 rows (0: all)

The file is opened read-only, so a query never blocks the pipeline (which writes its own working
copy and publishes atomically). Amounts print and export as the exact DECIMAL text.
"""

import argparse
import sys

import duckdb

from dagster_project.warehouse import published_path


def parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m dagster_project.sql",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("database", nargs="?", default=str(published_path()))
    parser.add_argument("-c", "--command", help="run one query and exit")
    parser.add_argument("--csv", metavar="FILE", help="with -c: write the result to FILE as CSV")
    parser.add_argument(
        "--max-rows", type=int, default=40, metavar="N", help="rows printed (0: all; default 40)"
    )
    args = parser.parse_args(argv)
    if args.csv and not args.command:
        parser.error("--csv needs -c QUERY")
    return args


def _answer(con, query: str, args) -> None:
    relation = con.sql(query)
    if relation is None:
        return
    if args.csv:
        relation.write_csv(args.csv)
        print(f"{len(relation)} rows written to {args.csv}")
    else:
        relation.show(max_rows=args.max_rows if args.max_rows > 0 else len(relation) + 1)


def main(argv=None) -> int:
    args = parse(argv)
    con = duckdb.connect(args.database, read_only=True)
    if args.command:
        try:
            _answer(con, args.command, args)
        except duckdb.Error as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        return 0
    print(f"{args.database} (read-only). End a query with ';', quit with Ctrl-D.")
    buffer = ""
    while True:
        try:
            line = input("sql> " if not buffer else "...> ")
        except EOFError:
            print()
            return 0
        buffer += line + "\n"
        if not buffer.strip().endswith(";"):
            continue
        try:
            _answer(con, buffer, args)
        except duckdb.Error as error:
            print(f"error: {error}", file=sys.stderr)
        buffer = ""


if __name__ == "__main__":
    raise SystemExit(main())
