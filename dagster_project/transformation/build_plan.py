"""Which Collection Periods a dbt build recomputes.

The loan-level models (the Simple Interest fold, the period balances, fct_receivable_period and
the per-period totals over it) are incremental: a build recomputes the rows of the earliest
Collection Period whose tapes were loaded since the last successful build, and of every later
period (balances carry forward), and keeps the rest. Everything is recomputed when there is no
earlier build, when the dbt models or macros changed, or when the deal terms or the Receivable
Schedule changed (they touch every row).
The plan is written to history.model_build_plan, which the models read (dbt/macros/incremental.sql);
a successful build is recorded in history.model_builds.
"""

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

DDL = """
create schema if not exists history;
create table if not exists history.model_builds (
    built_at timestamptz, models_fingerprint varchar, inputs_fingerprint varchar,
    deliveries_loaded_through timestamptz, rebuild_from varchar, reason varchar
);
create table if not exists history.model_build_plan (rebuild_from varchar);
"""

# After every Collection Period: an incremental build that recomputes no loan-level row.
NOTHING_TO_RECOMPUTE = "9999-12"

# What every loan-level row depends on besides its own tapes.
INPUTS_FINGERPRINT = """
select md5(string_agg(item, '|' order by item)) from (
    select 'terms ' || t::varchar as item from raw.deal_terms as t
    union all select 'classes ' || c::varchar from raw.deal_classes as c
    union all select 'calendar ' || p::varchar from raw.payment_calendar as p
    union all
    select 'schedule ' || sha256 from raw.deliveries
    where file_kind = 'receivable_schedule' and status = 'loaded'
)
"""

TAPE_SCOPE = r"regexp_full_match(scope, '\d{4}-\d{2}')"


@dataclass(frozen=True)
class BuildPlan:
    rebuild_from: str | None  # first Collection Period to recompute; None = everything
    models_fingerprint: str
    inputs_fingerprint: str
    loaded_through: dt.datetime | None
    reason: str

    @property
    def full_refresh(self) -> bool:
        return self.rebuild_from is None


def models_fingerprint(dbt_dir: Path) -> str:
    """Hash of the dbt code that shapes the tables (models, macros, project file)."""
    digest = hashlib.sha256()
    files = [dbt_dir / "dbt_project.yml"]
    for folder in ("models", "macros"):
        files += sorted(p for p in (dbt_dir / folder).rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(dbt_dir)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def plan(con, dbt_dir: Path) -> BuildPlan:
    con.execute(DDL)
    models = models_fingerprint(dbt_dir)
    (inputs,) = con.execute(INPUTS_FINGERPRINT).fetchone()
    (loaded_through,) = con.execute("select max(loaded_at) from raw.deliveries").fetchone()
    last = con.execute(
        "select models_fingerprint, inputs_fingerprint, deliveries_loaded_through "
        "from history.model_builds order by built_at desc limit 1"
    ).fetchone()

    def everything(reason: str) -> BuildPlan:
        return BuildPlan(None, models, inputs, loaded_through, reason)

    if last is None:
        return everything("first build: every row computed")
    last_models, last_inputs, last_loaded_through = last
    if last_models != models:
        return everything("dbt models changed since the last build: every row recomputed")
    if last_inputs != inputs:
        return everything(
            "deal terms or Receivable Schedule changed since the last build: every row recomputed"
        )
    (first_changed,) = con.execute(
        f"select min(scope) from raw.deliveries where {TAPE_SCOPE} and status = 'loaded' "
        "and loaded_at > coalesce(?::timestamptz, '-infinity'::timestamptz)",
        [last_loaded_through],
    ).fetchone()
    if first_changed is None:
        return BuildPlan(
            NOTHING_TO_RECOMPUTE, models, inputs, loaded_through, "no new tapes: no row recomputed"
        )
    return BuildPlan(
        first_changed,
        models,
        inputs,
        loaded_through,
        f"tapes loaded since the last build: Collection Periods from {first_changed} recomputed",
    )


def write(con, build: BuildPlan) -> None:
    """Tell the models what to recompute (an empty plan table means everything)."""
    con.execute(DDL)
    con.execute("delete from history.model_build_plan")
    if build.rebuild_from is not None:
        con.execute("insert into history.model_build_plan values (?)", [build.rebuild_from])


def clear(con) -> None:
    con.execute(DDL)
    con.execute("delete from history.model_build_plan")


def record(con, build: BuildPlan, built_at: dt.datetime) -> None:
    """A successful build: the next plan starts from what it covered."""
    con.execute(
        "insert into history.model_builds values (?, ?, ?, ?, ?, ?)",
        [
            built_at,
            build.models_fingerprint,
            build.inputs_fingerprint,
            build.loaded_through,
            build.rebuild_from,
            build.reason,
        ],
    )


def last_rebuilt_from(con) -> str:
    """First Collection Period the last successful build recomputed ('' = all of them)."""
    con.execute(DDL)
    row = con.execute(
        "select rebuild_from from history.model_builds order by built_at desc limit 1"
    ).fetchone()
    return (row[0] or "") if row else ""
