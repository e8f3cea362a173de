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


@dg.asset(
    group_name="publishing",
    deps=[published_warehouse],
    description="data/reports/: the certificate and the Statement to Noteholders per "
    "Distribution Date (HTML) and the deal performance report with plots.",
)
def servicer_reports(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    from dagster_project.reports.writer import reports_dir, write_reports

    out = reports_dir()
    counts = write_reports(Path(warehouse.published_path), out)
    context.log.info(f"wrote {counts['certificates']} certificates and statements to {out}")
    return dg.MaterializeResult(metadata={"path": str(out), **counts})
