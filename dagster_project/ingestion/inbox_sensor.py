"""Watch the inbox for monthly deliveries and launch the run of their Collection Period.

A delivery is a folder data/inbox/<YYYY-MM>/ (CAOT_INBOX_DIR) holding the loan-level status file
and the payment transactions, or one SEC EX-102 XML file. The sensor launches the partition's run
only when the delivery is complete (a Collection Period of the deal, its files present and not
empty) and new (not the
same bytes as a delivery already launched or loaded); anything else is reported, not run. The
run reads the files from the inbox folder (run tag caot/delivery_dir), validates and loads them.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import duckdb

from dagster_project import warehouse as warehouse_files
from dagster_project.checksums import sha256
from dagster_project.ingestion.assets import tape_files
from dagster_project.ingestion.ex102 import Ex102Error
from dagster_project.ingestion.monthly_job import monthly_servicing_job
from dagster_project.ingestion.partitions import COLLECTION_PERIODS

DELIVERY_TAG = "caot/delivery_dir"


def inbox_dir() -> Path:
    return Path(os.environ.get("CAOT_INBOX_DIR") or warehouse_files.DATA_DIR / "inbox")


@dataclass(frozen=True)
class Decision:
    folder: Path
    partition_key: str | None
    fingerprint: str | None
    problem: str | None  # why it is not run (incomplete, duplicate, not a period)

    @property
    def launch(self) -> bool:
        return self.problem is None


def loaded_fingerprints(published: Path) -> set[str]:
    """Fingerprints of the tapes already loaded, from the published warehouse (read-only)."""
    if not published.exists():
        return set()
    try:
        con = duckdb.connect(str(published), read_only=True)
    except duckdb.Error:
        return set()
    try:
        rows = con.execute(
            "select scope, string_agg(sha256, '+' order by file_kind) from raw.deliveries "
            "where status = 'loaded' and scope <> 'schedule' group by scope"
        ).fetchall()
    except duckdb.Error:
        return set()
    finally:
        con.close()
    return {digest for _scope, digest in rows}


def decide(folder: Path, launched: set[str], loaded: set[str]) -> Decision:
    key = folder.name
    if key not in COLLECTION_PERIODS.get_partition_keys():
        return Decision(folder, None, None, f"{folder}: not a Collection Period of the deal")
    try:
        files = {schema.kind: path for schema, path in tape_files(folder)}
    except Ex102Error as error:
        return Decision(folder, key, None, str(error))
    missing = [stem for stem, path in files.items() if not path.exists()]
    if missing:
        return Decision(folder, key, None, f"{folder}: incomplete, missing {', '.join(missing)}")
    empty = [stem for stem, path in files.items() if path.stat().st_size == 0]
    if empty:
        return Decision(folder, key, None, f"{folder}: incomplete, empty {', '.join(empty)}")
    fingerprint = "+".join(sha256(files[kind]) for kind in sorted(files))
    if fingerprint in launched or fingerprint in loaded:
        return Decision(folder, key, fingerprint, f"{folder}: duplicate of a delivery already run")
    return Decision(folder, key, fingerprint, None)


def scan(inbox: Path, launched: set[str], loaded: set[str]) -> list[Decision]:
    if not inbox.is_dir():
        return []
    return [
        decide(folder, launched, loaded) for folder in sorted(inbox.iterdir()) if folder.is_dir()
    ]


@dg.sensor(
    job=monthly_servicing_job,
    minimum_interval_seconds=60,
    description="Launch a Collection Period's run when its complete, new delivery lands in the "
    "inbox (data/inbox/<YYYY-MM>/); incomplete or duplicate deliveries are reported, not run.",
)
def monthly_delivery_sensor(context: dg.SensorEvaluationContext):
    launched = set(json.loads(context.cursor)) if context.cursor else set()
    decisions = scan(inbox_dir(), launched, loaded_fingerprints(warehouse_files.published_path()))
    requests = []
    for decision in decisions:
        if not decision.launch:
            if decision.fingerprint not in launched:  # say it once per delivery
                context.log.warning(decision.problem)
            continue
        requests.append(
            dg.RunRequest(
                run_key=f"inbox-{decision.partition_key}-{decision.fingerprint[:16]}",
                partition_key=decision.partition_key,
                tags={DELIVERY_TAG: str(decision.folder)},
            )
        )
        launched.add(decision.fingerprint)
    problems = [d.problem for d in decisions if not d.launch]
    context.update_cursor(json.dumps(sorted(launched)))
    if requests:
        return requests
    return dg.SkipReason("; ".join(problems) if problems else "no new delivery in the inbox")
