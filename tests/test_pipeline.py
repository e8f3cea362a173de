"""The whole pipeline on the small deal: every asset materializes and the warehouse is published."""

import json
import shutil

import duckdb
from conftest import run_pipeline

from dagster_project.checksums import sha256
from dagster_project.deal import PROJECT_ROOT
from dagster_project.ingestion.assets import reference_inputs_loaded
from dagster_project.resources import WarehouseResource


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


def test_rerunning_the_pipeline_changes_nothing(built_warehouse, capsys):
    def snapshot():
        with duckdb.connect(str(built_warehouse["published"]), read_only=True) as con:
            return con.execute(
                "select count(*), sum(reportingPeriodActualEndBalanceAmount) from raw.loan_status"
            ).fetchone(), con.execute("select count(*) from raw.deliveries").fetchone()

    before = snapshot()
    assert run_pipeline(built_warehouse) == 0
    assert snapshot() == before
    printed = capsys.readouterr().out
    assert "deal terms, schedule and market inputs already loaded as they are" in printed
    assert "periods already loaded as delivered" in printed


def test_reference_inputs_are_reloaded_when_the_deal_file_or_an_input_changes(
    built_warehouse, tmp_path
):
    def loaded(inputs=built_warehouse["input"], deal_file="") -> bool:
        return reference_inputs_loaded(
            WarehouseResource(
                work_path=str(built_warehouse["work"]),
                published_path=str(built_warehouse["published"]),
                input_dir=str(inputs),
                deal_file=deal_file,
            )
        )

    assert loaded()
    inputs = tmp_path / "inputs"
    shutil.copytree(built_warehouse["input"], inputs, ignore=shutil.ignore_patterns("deliveries"))
    assert loaded(inputs)
    with (inputs / "libor_rates.csv").open("a") as libor:
        libor.write("\n")
    assert not loaded(inputs)
    deal = (PROJECT_ROOT / "data" / "deals" / "caot_2015_4.yaml").read_text()
    changed = tmp_path / "deal.yaml"
    changed.write_text(deal.replace('servicing_rate: "0.0100"', 'servicing_rate: "0.0125"'))
    assert changed.read_text() != deal
    assert not loaded(deal_file=str(changed))


def test_a_rerun_with_nothing_changed_runs_no_model_and_a_partial_build_is_not_recorded(
    built_warehouse, capsys
):
    """A run whose inputs all equal what the last build saw runs no dbt model; a build that
    leaves out models it needed (a subset chosen in the UI) does not count as a build, so the
    next one still rebuilds what it was meant to."""
    import dagster as dg

    from dagster_project.definitions import defs
    from dagster_project.transformation.dbt_assets import warehouse_models

    assert run_pipeline(built_warehouse) == 0
    assert f"dbt: 0 of {len(warehouse_models.keys)} models to rebuild" in capsys.readouterr().out

    def builds() -> int:
        with duckdb.connect(str(built_warehouse["work"]), read_only=True) as con:
            return con.execute("select count(*) from history.model_builds").fetchone()[0]

    recorded = builds()
    with duckdb.connect(str(built_warehouse["work"])) as con:
        con.execute("delete from history.source_fingerprints")  # as if no build had seen them
    resources = {
        **defs.resources,
        "warehouse": WarehouseResource(
            work_path=str(built_warehouse["work"]),
            published_path=str(built_warehouse["published"]),
            input_dir=str(built_warehouse["input"]),
        ),
    }
    one_model = dg.AssetKey(["staging", "stg_deal__terms"])
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [warehouse_models], selection=[one_model], resources=resources, instance=instance
        )
    assert result.success
    assert builds() == recorded  # every model was needed, one was built: not recorded
    assert run_pipeline(built_warehouse) == 0
    # no fingerprints known: every model runs (no "N of M" selection), and the build counts
    assert "models to rebuild" not in capsys.readouterr().out
    assert builds() == recorded + 1


def test_every_dbt_test_is_an_asset_check_in_dagster():
    """A dbt test Dagster cannot attach to one model is only logged as an observation, with no
    pass or fail on any asset: the singular tests over several models name theirs in
    `meta.dagster.ref`."""
    from dagster_project.transformation.dbt_assets import warehouse_models

    manifest = json.loads((PROJECT_ROOT / "dbt" / "target" / "manifest.json").read_text())
    tests = {n["name"] for n in manifest["nodes"].values() if n["resource_type"] == "test"}
    assert tests == {key.name for key in warehouse_models.check_keys}
