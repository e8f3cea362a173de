"""The resources every definition shares: the warehouse and dbt."""

import sys
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource

from dagster_project.defs.transformation import DBT_PROJECT
from dagster_project.resources import WarehouseResource


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(
        resources={
            "warehouse": WarehouseResource(),
            # the dbt installed beside this interpreter (the project's environment), whatever
            # PATH says
            "dbt": DbtCliResource(
                project_dir=DBT_PROJECT, dbt_executable=str(Path(sys.executable).parent / "dbt")
            ),
        }
    )
