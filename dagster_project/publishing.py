"""The published warehouse: a complete, consistent snapshot for readers."""

from pathlib import Path

import dagster as dg

from dagster_project import warehouse as warehouse_files
from dagster_project.resources import WarehouseResource
from dagster_project.transformation.dbt_assets import warehouse_models


@dg.asset(
    group_name="publishing",
    deps=[warehouse_models],
    description="data/warehouse.duckdb: the finished warehouse, swapped in atomically.",
)
def published_warehouse(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    path = warehouse_files.publish(Path(warehouse.work_path), Path(warehouse.published_path))
    size = path.stat().st_size
    return dg.MaterializeResult(metadata={"path": str(path), "bytes": size})
