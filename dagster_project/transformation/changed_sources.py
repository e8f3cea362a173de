"""Which dbt sources changed since the last successful build, and which models they reach.

A monthly run whose only new inputs are the tapes need not rebuild, nor test again, the models that
read nothing but the deal terms, the Receivable Schedule and the market inputs: their rows are
those the last build made and tested. Each successful build records a fingerprint of every
source's contents (row count and a sum of row hashes; a source not present reads as 'absent') in
history.source_fingerprints; the next run builds only the models downstream of a source whose
fingerprint differs. Everything is built when there is no recorded build or the dbt code changed
(build_plan decides that).
"""

import datetime as dt
import json
from pathlib import Path

import duckdb

DDL = """
create schema if not exists history;
create table if not exists history.source_fingerprints (
    built_at timestamptz, source varchar, fingerprint varchar
);
"""


def load_manifest(path: Path) -> dict:
    return json.loads(path.read_text())


def fingerprints(con, manifest: dict) -> dict[str, str]:
    """The current fingerprint of every source of the dbt project, by unique id."""
    out = {}
    for unique_id, source in manifest["sources"].items():
        relation = f'"{source["schema"]}"."{source["identifier"]}"'
        try:
            rows, hashes = con.execute(
                f"select count(*), sum(hash(t)::hugeint) from {relation} as t"
            ).fetchone()
        except duckdb.CatalogException:
            out[unique_id] = "absent"
            continue
        out[unique_id] = f"{rows}:{hashes}"
    return out


def record(con, current: dict[str, str], built_at: dt.datetime) -> None:
    """A successful build saw these sources."""
    con.execute(DDL)
    con.executemany(
        "insert into history.source_fingerprints values (?, ?, ?)",
        [(built_at, source, fingerprint) for source, fingerprint in sorted(current.items())],
    )
    # only the last build's fingerprints are ever compared
    con.execute(
        "delete from history.source_fingerprints "
        "where built_at < (select max(built_at) from history.source_fingerprints)"
    )


def changed(con, current: dict[str, str]) -> set[str] | None:
    """The sources whose fingerprint differs from the last successful build's (None when no
    build recorded any)."""
    con.execute(DDL)
    last = dict(
        con.execute(
            "select source, fingerprint from history.source_fingerprints "
            "where built_at = (select max(built_at) from history.source_fingerprints)"
        ).fetchall()
    )
    if not last:
        return None
    return {source for source, value in current.items() if last.get(source) != value}


def downstream_models(manifest: dict, sources: set[str]) -> set[str]:
    """Unique ids of the models that read any of `sources`, directly or through other models."""
    children = manifest["child_map"]
    reached: set[str] = set()
    frontier = list(sources)
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child.startswith("model.") and child not in reached:
                reached.add(child)
                frontier.append(child)
    return reached
