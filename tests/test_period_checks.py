"""The servicing criteria per monthly partition of the tape (Dagster's partitioned asset checks):
evaluated for one partition on demand. The run-by-run reporting of every recomputed period is
tested in test_faults (a missing period fails its successors' checks, its late arrival clears
them)."""

import dagster as dg
import duckdb

from dagster_project.definitions import defs
from dagster_project.ingestion.partitions import COLLECTION_PERIODS
from dagster_project.quality.checks import PERIOD_CHECK, TAPE
from dagster_project.resources import WarehouseResource


def evaluate(paths: dict, period: str) -> dg.AssetCheckEvaluation:
    """Run the check alone for one partition, as the UI's "execute" on a partition does."""
    warehouse = WarehouseResource(
        work_path=str(paths["work"]),
        published_path=str(paths["published"]),
        input_dir=str(paths["input"]),
    )
    definitions = dg.Definitions(
        assets=list(defs.assets),
        asset_checks=list(defs.asset_checks),
        resources={**defs.resources, "warehouse": warehouse},
    )
    job = definitions.resolve_implicit_global_asset_job_def().get_subset(
        asset_selection=set(), asset_check_selection={dg.AssetCheckKey(TAPE, PERIOD_CHECK)}
    )
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(partition_key=period, instance=instance)
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


def test_a_published_period_passes_on_its_partition(built_warehouse):
    con = duckdb.connect(str(built_warehouse["work"]), read_only=True)
    period, date = con.execute(
        "select collection_period, distribution_date from quality.certificate_gate "
        "where is_publishable order by 1 limit 1"
    ).fetchone()
    con.close()
    evaluation = evaluate(built_warehouse, period)
    assert (evaluation.asset_key, evaluation.check_name) == (TAPE, PERIOD_CHECK)
    assert evaluation.partition == period and evaluation.passed
    assert evaluation.metadata["certificate"].value == "published"
    assert evaluation.metadata["distribution_date"].value == date.isoformat()


def test_a_period_without_a_tape_fails_and_says_so(built_warehouse):
    last = COLLECTION_PERIODS.get_partition_keys()[-1]
    con = duckdb.connect(str(built_warehouse["work"]), read_only=True)
    gate = con.execute("select collection_period from quality.certificate_gate").fetchall()
    loaded = {period for (period,) in gate}
    con.close()
    assert last not in loaded  # the small deal's tapes stop before the deal's last period
    evaluation = evaluate(built_warehouse, last)
    assert not evaluation.passed and evaluation.partition == last
    assert "not loaded" in evaluation.metadata["certificate"].value
