"""Everything Dagster loads: assets, resources. Thin by design; modules by domain."""

import sys
from pathlib import Path

import dagster as dg

from dagster_project.ingestion.assets import (
    deal_terms,
    market_inputs,
    monthly_tape,
    receivable_schedule,
)
from dagster_project.ingestion.determination_schedule import determination_date_schedule
from dagster_project.ingestion.inbox_sensor import monthly_delivery_sensor
from dagster_project.ingestion.monthly_job import monthly_servicing_job
from dagster_project.publishing import published_warehouse, servicer_reports
from dagster_project.quality.checks import servicing_criteria, servicing_criteria_of_the_period
from dagster_project.quality.eligibility_register import eligibility_register
from dagster_project.resources import WarehouseResource
from dagster_project.transformation.dbt_assets import DBT_PROJECT, DbtCli, warehouse_models

defs = dg.Definitions(
    assets=[
        deal_terms,
        receivable_schedule,
        eligibility_register,
        market_inputs,
        monthly_tape,
        warehouse_models,
        published_warehouse,
        servicer_reports,
    ],
    asset_checks=[servicing_criteria, servicing_criteria_of_the_period],
    jobs=[monthly_servicing_job],
    schedules=[determination_date_schedule],
    sensors=[monthly_delivery_sensor],
    resources={
        "warehouse": WarehouseResource(),
        # The dbt of this interpreter's environment (.venv), whatever PATH says, through
        # `caot-dbt`: dbt_process.py.
        "dbt": DbtCli(
            project_dir=DBT_PROJECT, dbt_executable=str(Path(sys.executable).parent / "caot-dbt")
        ),
    },
)
