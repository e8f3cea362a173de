"""A read-only SQL prompt on the published warehouse: `python -m dagster_project.sql [FILE]`.

`-c "select ..."` runs one query and exits. The file is opened read-only, so a query never blocks
the pipeline (which writes its own working copy and publishes atomically).
"""

import argparse
import sys

import duckdb

from dagster_project.warehouse import published_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("database", nargs="?", default=str(published_path()))
    parser.add_argument("-c", "--command", help="run one query and exit")
    args = parser.parse_args(argv)
    con = duckdb.connect(args.database, read_only=True)
    queries = [args.command] if args.command else None
    if queries is None:
        print(f"{args.database} (read-only). End a query with ';', quit with Ctrl-D.")
    buffer = ""
    while True:
        if queries is not None:
            if not queries:
                return 0
            buffer = queries.pop()
        else:
            try:
                line = input("sql> " if not buffer else "...> ")
            except EOFError:
                print()
                return 0
            buffer += line + "\n"
            if not buffer.strip().endswith(";"):
                continue
        try:
            relation = con.sql(buffer)
            if relation is not None:
                relation.show(max_rows=40)
        except duckdb.Error as error:
            print(f"error: {error}", file=sys.stderr)
            if queries is not None:
                return 1
        buffer = ""


if __name__ == "__main__":
    raise SystemExit(main())
