"""The resources every definition shares: the warehouse and dbt."""

import dagster as dg
from dagster_dbt import DbtCliResource

from dagster_project.defs.transformation import DBT_EXECUTABLE, DBT_PROJECT
from dagster_project.resources import WarehouseResource


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(
        resources={
            "warehouse": WarehouseResource(),
            "dbt": DbtCliResource(project_dir=DBT_PROJECT, dbt_executable=DBT_EXECUTABLE),
        }
    )
