"""Which models a build runs: those downstream of a source whose contents changed since the last
successful build (dagster_project/transformation/changed_sources.py).

That such builds give the same tables as a build from scratch is proven end to end in test_faults
(late and restated tapes, a restated LIBOR fixing), against a --full-refresh build."""

import datetime as dt

import duckdb
import pytest

from dagster_project.transformation import changed_sources

MANIFEST = {
    "sources": {
        "source.caot.raw.deal_terms": {"schema": "raw", "identifier": "deal_terms"},
        "source.caot.raw.loan_status": {"schema": "raw", "identifier": "loan_status"},
        "source.caot.raw.reported": {"schema": "raw", "identifier": "reported"},
    },
    "child_map": {
        "source.caot.raw.deal_terms": ["model.caot.stg_terms"],
        "source.caot.raw.loan_status": ["model.caot.stg_tape"],
        "source.caot.raw.reported": [],
        "model.caot.stg_terms": ["model.caot.waterfall", "test.caot.not_null_stg_terms"],
        "model.caot.stg_tape": ["model.caot.balances"],
        "model.caot.balances": ["model.caot.waterfall", "model.caot.dim_receivable"],
        "model.caot.waterfall": ["model.caot.certificate"],
        "model.caot.dim_receivable": [],
        "model.caot.certificate": [],
        "test.caot.not_null_stg_terms": [],
    },
}
T0 = dt.datetime(2026, 1, 9, tzinfo=dt.UTC)


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute(
        """
        create schema raw;
        create table raw.deal_terms (term_name varchar, term_value varchar);
        create table raw.loan_status (receivable_id varchar, balance decimal(18, 2));
        insert into raw.deal_terms values ('servicing_rate', '0.01');
        insert into raw.loan_status values ('R1', 100.00), ('R2', 50.00);
        """
    )
    yield con
    con.close()


def test_models_downstream_of_a_source_through_other_models_but_not_tests():
    assert changed_sources.downstream_models(MANIFEST, {"source.caot.raw.loan_status"}) == {
        "model.caot.stg_tape",
        "model.caot.balances",
        "model.caot.waterfall",
        "model.caot.dim_receivable",
        "model.caot.certificate",
    }
    assert changed_sources.downstream_models(MANIFEST, {"source.caot.raw.deal_terms"}) == {
        "model.caot.stg_terms",
        "model.caot.waterfall",
        "model.caot.certificate",
    }
    assert changed_sources.downstream_models(MANIFEST, set()) == set()


def test_the_sources_of_tables_loaded_in_the_build_run():
    """A run that loads a tape before its build selects the models downstream of the tape's
    tables, whose fingerprints have not changed yet when the run is planned."""
    assert changed_sources.sources_of(MANIFEST, {"raw.loan_status", "raw.absent"}) == {
        "source.caot.raw.loan_status"
    }
    assert changed_sources.sources_of(MANIFEST, set()) == set()


def test_nothing_recorded_means_everything_then_only_what_changed(con):
    current = changed_sources.fingerprints(con, MANIFEST)
    assert current["source.caot.raw.reported"] == "absent"
    assert changed_sources.changed(con, current) is None  # no build recorded: build everything
    changed_sources.record(con, current, T0)
    assert changed_sources.changed(con, changed_sources.fingerprints(con, MANIFEST)) == set()

    con.execute("update raw.loan_status set balance = 99.99 where receivable_id = 'R1'")
    after_tape = changed_sources.fingerprints(con, MANIFEST)
    assert changed_sources.changed(con, after_tape) == {"source.caot.raw.loan_status"}
    # a build that failed records nothing: the change is still pending at the next run
    assert changed_sources.changed(con, after_tape) == {"source.caot.raw.loan_status"}

    changed_sources.record(con, after_tape, T0 + dt.timedelta(days=1))
    con.execute("create table raw.reported (x int)")  # a source that appears
    con.execute("delete from raw.deal_terms")  # and one emptied
    assert changed_sources.changed(con, changed_sources.fingerprints(con, MANIFEST)) == {
        "source.caot.raw.reported",
        "source.caot.raw.deal_terms",
    }
    # only the last build's fingerprints are kept
    assert con.execute(
        "select count(distinct built_at) from history.source_fingerprints"
    ).fetchone() == (1,)


def test_a_row_swapped_between_two_rows_changes_the_fingerprint(con):
    before = changed_sources.fingerprints(con, MANIFEST)["source.caot.raw.loan_status"]
    con.execute(
        "update raw.loan_status set balance = case receivable_id when 'R1' then 50.00 "
        "else 100.00 end"
    )
    assert changed_sources.fingerprints(con, MANIFEST)["source.caot.raw.loan_status"] != before


def test_the_build_run_of_any_changed_source_can_be_planned():
    """Whatever one input changed, the build run's selection (the models downstream of it, the
    models the servicing criteria check, publishing and reports) forms a run Dagster can order."""
    import dagster as dg

    from dagster_project.pipeline import build_assets, rebuild_selection
    from dagster_project.transformation.dbt_assets import _asset_keys, _manifest, warehouse_models

    assets = build_assets()
    from dagster_project.definitions import defs

    definitions = dg.Definitions(assets=assets, resources=defs.resources)
    graph = definitions.resolve_asset_graph()
    job = definitions.resolve_implicit_global_asset_job_def()
    manifest = _manifest()
    assert len(manifest["sources"]) > 10
    for source in manifest["sources"]:
        models = _asset_keys(changed_sources.downstream_models(manifest, {source}))
        selection, rebuilt = rebuild_selection(assets, models)
        assert set(models) <= set(rebuilt) <= warehouse_models.keys
        subset = job.get_subset(
            asset_selection=selection.resolve(graph),
            asset_check_selection=selection.resolve_checks(graph),
        )  # raises on circular dependencies
        assert subset is not None, source
