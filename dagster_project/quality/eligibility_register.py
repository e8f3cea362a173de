"""The Section 2.3 validation of the Receivable Schedule as its own asset: the breach register
(quality.eligibility_exceptions, which the dbt models read for the 2.4 repurchases), with the
suites' results as its asset checks (quality/checks.py).

It follows the schedule's load rather than being part of it, so that the whole pipeline validates
after the monthly tapes are in and imports Great Expectations (about 3 s) while they load
(pipeline.py). The suites run only when what they read changed since their last run
(runs.schedule_inputs: the schedule, the suites as the deal file builds them); otherwise the stored
results stand and are reported again.
"""

from pathlib import Path

import dagster as dg

from dagster_project import warehouse as warehouse_files
from dagster_project.quality.checks import REGISTER, SCHEDULE_CHECK_SPECS, schedule_check_results
from dagster_project.quality.runs import (
    SCHEDULE_SUITES,
    schedule_validated,
    summaries,
    validate_schedule,
)
from dagster_project.resources import WarehouseResource

SCHEDULE = dg.AssetKey(["raw", "receivable_schedule"])


@dg.multi_asset(
    name="eligibility_register",
    specs=[
        dg.AssetSpec(
            REGISTER,
            description="The Section 2.3 breaches the Great Expectations suites found in the "
            "schedule, one row per receivable and failed expectation (the register's source).",
            group_name="quality",
            kinds={"duckdb"},
            deps=[SCHEDULE],
        )
    ],
    check_specs=SCHEDULE_CHECK_SPECS,
)
def eligibility_register(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    deal = warehouse.deal()
    with warehouse.connect() as con:
        validated = not schedule_validated(con, deal)
        if validated:
            context.log.info("validating the Receivable Schedule against Section 2.3")
            validate_schedule(con, deal)
        results = summaries(con, SCHEDULE_SUITES)
        breaches = con.execute("select count(*) from quality.eligibility_exceptions").fetchone()[0]
    yield dg.MaterializeResult(
        asset_key=REGISTER, metadata={"breaches": breaches, "validated_this_run": validated}
    )
    yield from schedule_check_results(results)


def register_current(warehouse: WarehouseResource) -> bool:
    """Whether the register and the Section 2.3 results are those of the loaded schedule and the
    suites as they are now: a run of eligibility_register would validate nothing."""
    if not Path(warehouse.work_path).exists():
        return False
    with warehouse_files.connect(warehouse.work_path, read_only=True) as con:
        loaded = warehouse_files.table_exists(con, "raw", "deliveries")
        return loaded and schedule_validated(con, warehouse.deal())
