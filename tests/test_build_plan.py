"""What an incremental dbt build recomputes (dagster_project/transformation/build_plan.py).

Incremental and full builds giving the same rows is proven end to end in test_faults (a late
period, a restatement, a bad restatement, each compared with a build from scratch)."""

import datetime as dt
import shutil

import duckdb
import pytest

from dagster_project.transformation import build_plan
from dagster_project.transformation.dbt_assets import DBT_DIR

T0 = dt.datetime(2026, 1, 9, tzinfo=dt.UTC)


def load(con, scope: str, kind: str, at: dt.datetime, sha: str = "a") -> None:
    con.execute(
        "update raw.deliveries set status = 'superseded' where scope = ? and file_kind = ?",
        [scope, kind],
    )
    con.execute(
        "insert into raw.deliveries values (?, ?, ?, '', ?, 1, 'loaded', 0, null, ?, null)",
        [f"{scope}-{kind}-{at:%H%M}", kind, scope, sha, at],
    )


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute(
        """
        create schema raw;
        create table raw.deliveries (
            delivery_id varchar, file_kind varchar, scope varchar, file_path varchar,
            sha256 varchar, row_count bigint, status varchar, finding_count bigint,
            first_finding varchar, loaded_at timestamptz, superseded_at timestamptz);
        create table raw.deal_terms (term_name varchar, term_value varchar);
        create table raw.deal_classes (class_id varchar, initial_balance decimal(18, 2));
        create table raw.payment_calendar (collection_period varchar, distribution_date date);
        insert into raw.deal_terms values ('defaulted_days_past_due', '120');
        insert into raw.deal_classes values ('A-1', 1000.00);
        insert into raw.payment_calendar values ('2015-10', '2015-11-16');
        """
    )
    load(con, "schedule", "receivable_schedule", T0)
    for month, period in enumerate(["2015-10", "2015-11", "2015-12"], start=1):
        for kind in ("loan_status", "payment_transactions"):
            load(con, period, kind, T0 + dt.timedelta(minutes=month))
    yield con
    con.close()


def built(con) -> build_plan.BuildPlan:
    plan = build_plan.plan(con, DBT_DIR)
    build_plan.record(con, plan, dt.datetime.now(dt.UTC))
    return plan


def test_the_first_build_computes_everything(con):
    plan = build_plan.plan(con, DBT_DIR)
    assert plan.full_refresh and plan.rebuild_from is None
    build_plan.write(con, plan)
    assert con.execute("select count(*) from history.model_build_plan").fetchone() == (0,)


def test_a_new_period_is_recomputed_alone(con):
    built(con)
    load(con, "2016-01", "loan_status", T0 + dt.timedelta(hours=1))
    plan = build_plan.plan(con, DBT_DIR)
    assert plan.rebuild_from == "2016-01" and not plan.full_refresh
    build_plan.write(con, plan)
    assert con.execute("select * from history.model_build_plan").fetchall() == [("2016-01",)]
    build_plan.clear(con)
    assert con.execute("select count(*) from history.model_build_plan").fetchone() == (0,)


def test_a_restated_period_is_recomputed_with_every_later_one(con):
    built(con)
    load(con, "2016-01", "loan_status", T0 + dt.timedelta(hours=1))
    load(con, "2015-11", "payment_transactions", T0 + dt.timedelta(hours=1), sha="b")
    assert build_plan.plan(con, DBT_DIR).rebuild_from == "2015-11"


def test_nothing_new_recomputes_no_loan_level_row(con):
    built(con)
    plan = build_plan.plan(con, DBT_DIR)
    assert plan.rebuild_from == build_plan.NOTHING_TO_RECOMPUTE


def test_a_failed_build_is_not_a_starting_point(con):
    built(con)
    load(con, "2016-01", "loan_status", T0 + dt.timedelta(hours=1))
    build_plan.plan(con, DBT_DIR)  # planned, but the build failed: nothing recorded
    load(con, "2016-02", "loan_status", T0 + dt.timedelta(hours=2))
    assert build_plan.plan(con, DBT_DIR).rebuild_from == "2016-01"


@pytest.mark.parametrize(
    "change",
    [
        "update raw.deal_terms set term_value = '90'",
        "insert into raw.payment_calendar values ('2015-11', '2015-12-15')",
        "update raw.deal_classes set initial_balance = 1001.00",
    ],
)
def test_changed_deal_terms_recompute_everything(con, change):
    built(con)
    con.execute(change)
    plan = build_plan.plan(con, DBT_DIR)
    assert plan.full_refresh and "deal terms" in plan.reason


def test_a_new_receivable_schedule_recomputes_everything(con):
    built(con)
    load(con, "schedule", "receivable_schedule", T0 + dt.timedelta(hours=1), sha="b")
    assert build_plan.plan(con, DBT_DIR).full_refresh


def test_changed_models_recompute_everything(con, tmp_path):
    dbt = tmp_path / "dbt"
    for part in ("models", "macros"):
        shutil.copytree(DBT_DIR / part, dbt / part)
    shutil.copyfile(DBT_DIR / "dbt_project.yml", dbt / "dbt_project.yml")
    build_plan.record(con, build_plan.plan(con, dbt), dt.datetime.now(dt.UTC))
    assert not build_plan.plan(con, dbt).full_refresh
    model = next((dbt / "models" / "marts").glob("*.sql"))
    model.write_text(model.read_text() + "\n-- changed\n")
    plan = build_plan.plan(con, dbt)
    assert plan.full_refresh and "models changed" in plan.reason


def test_the_fingerprint_follows_the_code_that_shapes_tables_not_the_tests(tmp_path):
    dbt = tmp_path / "dbt"
    shutil.copytree(DBT_DIR, dbt, ignore=shutil.ignore_patterns("target", "logs"))
    before = build_plan.models_fingerprint(dbt)
    test = next((dbt / "tests").glob("*.sql"))
    test.write_text(test.read_text() + "\n-- a comment\n")
    assert build_plan.models_fingerprint(dbt) == before
    macro = dbt / "macros" / "simple_interest_step.sql"
    macro.write_text(macro.read_text() + "\n")
    assert build_plan.models_fingerprint(dbt) != before
