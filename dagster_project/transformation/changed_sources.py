"""Which dbt sources changed since the last successful build, and which models they reach.

A monthly run whose only new inputs are the tapes need not rebuild, nor test again, the models that
read nothing but the deal terms, the Receivable Schedule and the market inputs: their rows are
those the last build made and tested. Each successful build records a fingerprint of every
source's contents in history.source_fingerprints; the next run builds only the models downstream
of a source whose fingerprint differs. Everything is built when there is no recorded build or the
dbt code changed (build_plan decides that).

A fingerprint is a source's row count and a sum of its row hashes ('absent' for a source not
present), except for the tables the loader keeps with a ledger (the tapes, the Receivable Schedule,
the market inputs): the loader replaces a table's rows of a scope in the same transaction as the
scope's raw.deliveries rows, so the loaded files (each with its SHA-256 and row count) identify
the table's contents. Reading them takes a millisecond where hashing the tapes' millions of rows
took 0.2 s a run at full size and seconds at the shelf. Like build_plan's inputs fingerprint,
this trusts that nothing but the loader writes those tables.
"""

import datetime as dt
import json
from pathlib import Path

import duckdb

from dagster_project.ingestion.schemas import MARKET_SCHEMAS, RECEIVABLE_SCHEDULE, TAPE_SCHEMAS

DDL = """
create schema if not exists history;
create table if not exists history.source_fingerprints (
    built_at timestamptz, source varchar, fingerprint varchar
);
"""


def load_manifest(path: Path) -> dict:
    return json.loads(path.read_text())


# the loader's tables and the file kind of their rows in raw.deliveries
LEDGERED = {
    schema.table: schema.kind for schema in (RECEIVABLE_SCHEDULE, *TAPE_SCHEMAS, *MARKET_SCHEMAS)
}

LEDGER = """
select file_kind, 'ledger ' || count(*) || ':' || md5(string_agg(
    delivery_id || ' ' || sha256 || ' ' || row_count, '|' order by delivery_id
))
from raw.deliveries where status = 'loaded' group by file_kind
"""


def _ledger(con) -> dict[str, str]:
    """The fingerprint of each file kind with loaded deliveries (none without a ledger)."""
    try:
        return dict(con.execute(LEDGER).fetchall())
    except duckdb.CatalogException:
        return {}


def fingerprints(con, manifest: dict) -> dict[str, str]:
    """The current fingerprint of every source of the dbt project, by unique id."""
    ledger = _ledger(con)
    out = {}
    for unique_id, source in manifest["sources"].items():
        kind = LEDGERED.get(f"{source['schema']}.{source['identifier']}")
        if kind in ledger:
            out[unique_id] = ledger[kind]
            continue
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


def sources_of(manifest: dict, tables: set[str]) -> set[str]:
    """Unique ids of the sources that are these tables ("schema.table")."""
    return {
        unique_id
        for unique_id, source in manifest["sources"].items()
        if f"{source['schema']}.{source['identifier']}" in tables
    }


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
