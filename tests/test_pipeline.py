"""The whole pipeline on the small deal: every asset materializes and the warehouse is published."""

import json

import duckdb
from conftest import run_pipeline

from dagster_project.generator.writers import sha256


def test_warehouse_holds_the_schedule_and_every_monthly_tape(built_warehouse):
    deliveries = sorted(p.name for p in (built_warehouse["input"] / "deliveries").iterdir())
    with duckdb.connect(str(built_warehouse["published"]), read_only=True) as con:
        periods = [
            r[0]
            for r in con.execute("select distinct scope from raw.loan_status order by 1").fetchall()
        ]
        assert periods == deliveries
        count, balance = con.execute(
            "select count(*), sum(principal_balance) from raw.receivable_schedule"
        ).fetchone()
        assert str(balance) == "1050000018.44"
        for period in deliveries[:3]:
            manifest = json.loads(
                (built_warehouse["input"] / "deliveries" / period / "delivery.json").read_text()
            )
            rows = con.execute(
                "select count(*) from raw.loan_status where scope = ?", [period]
            ).fetchone()[0]
            assert rows == manifest["files"]["loan_status"]["rows"]
            digest = con.execute(
                "select sha256 from raw.deliveries where scope = ? and "
                "file_kind = 'loan_status' and status = 'loaded'",
                [period],
            ).fetchone()[0]
            assert digest == manifest["files"]["loan_status"]["sha256"]
            assert digest == sha256(
                built_warehouse["input"] / "deliveries" / period / "loan_status.csv"
            )
        terms = dict(con.execute("select term, value from raw.deal_terms").fetchall())
        assert terms["overcollateralization_target_amount"] == "5250000.09"
        assert con.execute("select count(*) from raw.payment_calendar").fetchone()[0] == 79


def test_staging_drops_obligor_personal_data(built_warehouse):
    with duckdb.connect(str(built_warehouse["published"]), read_only=True) as con:
        columns = {
            r[0]
            for r in con.execute(
                "select column_name from information_schema.columns "
                "where table_schema in ('staging', 'intermediate', 'marts')"
            ).fetchall()
        }
        assert "obligor_name" not in columns and "obligor_street_address" not in columns
        assert "obligor_key" in columns


def test_no_obligor_name_or_street_address_reaches_any_model_or_quality_table(built_warehouse):
    """Not only the columns: no text value anywhere past raw holds a name or a street address."""
    with duckdb.connect(str(built_warehouse["published"]), read_only=True) as con:
        text_columns = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns "
            "where table_schema in ('staging', 'intermediate', 'marts', 'quality') "
            "and data_type = 'VARCHAR'"
        ).fetchall()
        assert len(text_columns) > 20
        for schema, table, column in text_columns:
            leaked = con.execute(
                f'select count(*) from {schema}.{table} where "{column}" in '
                "(select obligor_name from raw.receivable_schedule union all "
                "select obligor_street_address from raw.receivable_schedule)"
            ).fetchone()[0]
            assert leaked == 0, (schema, table, column)


def test_rerunning_the_pipeline_changes_nothing(built_warehouse):
    def snapshot():
        with duckdb.connect(str(built_warehouse["published"]), read_only=True) as con:
            return con.execute(
                "select count(*), sum(reportingPeriodActualEndBalanceAmount) from raw.loan_status"
            ).fetchone(), con.execute("select count(*) from raw.deliveries").fetchone()

    before = snapshot()
    assert run_pipeline(built_warehouse) == 0
    assert snapshot() == before
