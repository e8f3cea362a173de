"""The published warehouse: a complete, consistent snapshot for readers."""

import datetime as dt
from pathlib import Path

import dagster as dg

from dagster_project import warehouse as warehouse_files
from dagster_project.certificate_versions import record_versions
from dagster_project.resources import WarehouseResource
from dagster_project.transformation.dbt_assets import warehouse_models


@dg.asset(
    group_name="publishing",
    deps=[warehouse_models],
    description="data/warehouse.duckdb: the finished warehouse, swapped in atomically.",
)
def published_warehouse(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    with warehouse.connect() as con:
        versions = record_versions(con, dt.datetime.now(dt.UTC))
        figures = headline_figures(con)
    for date, version in versions:
        if version > 1:
            context.log.warning(f"certificate for {date} restated: version {version}")
    path = warehouse_files.publish(Path(warehouse.work_path), Path(warehouse.published_path))
    return dg.MaterializeResult(
        metadata={
            "path": str(path),
            "bytes": path.stat().st_size,
            "certificate_versions_recorded": len(versions),
            "certificates_restated": ", ".join(str(d) for d, v in versions if v > 1) or "none",
            **figures,
        }
    )


# The certificate lines shown on the asset page (Dagster plots numeric metadata across runs).
HEADLINE_LINES = {
    "pool_balance": "ending_pool_balance",
    "note_balance": "class_balance_end:total",
    "available_funds": "available_funds_amount",
    "excess_collections": "excess_collections_amount",
    "reserve_account_balance": "reserve_account_ending_balance",
    "overcollateralization": "overcollateralization_amount",
    "cumulative_net_loss_percent": "cumulative_net_loss_percent",
}


def headline_figures(con) -> dict:
    """Row counts and the latest publishable certificate's main figures, for the asset page.

    Floats here only feed the UI's plots; the exact DECIMAL figures are in the warehouse."""
    latest = con.execute(
        "select max(distribution_date) from quality.certificate_gate where is_publishable"
    ).fetchone()[0]
    withheld = con.execute(
        "select count(*) from quality.certificate_gate where not is_publishable"
    ).fetchone()[0]
    counts = con.execute(
        "select (select count(*) from marts.dim_receivable), "
        "(select count(*) from marts.fct_receivable_period), "
        "(select count(*) from marts.fct_eligibility_exception)"
    ).fetchone()
    figures: dict = {
        "receivables": counts[0],
        "receivable_periods": counts[1],
        "eligibility_breaches": counts[2],
        "certificates_withheld": withheld,
        "latest_publishable_distribution_date": str(latest),
    }
    if latest is not None:
        rows = con.execute(
            "select key, amount from marts.rpt_servicer_certificate "
            "where distribution_date = ? and list_contains(?, key)",
            [latest, list(HEADLINE_LINES.values())],
        ).fetchall()
        amounts = dict(rows)
        for name, key in HEADLINE_LINES.items():
            if amounts.get(key) is not None:
                figures[name] = dg.MetadataValue.float(float(amounts[key]))
    return figures


@dg.asset(
    group_name="publishing",
    deps=[published_warehouse],
    description="data/reports/: the certificate and the Statement to Noteholders per "
    "Distribution Date (HTML) and the deal performance report with plots.",
)
def servicer_reports(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    from dagster_project.reports.writer import reports_dir, write_reports

    out = reports_dir()
    counts = warehouse_files.publish_folder(
        lambda folder: write_reports(Path(warehouse.published_path), folder, reuse=out), out
    )
    context.log.info(f"wrote {counts['certificates']} certificates and statements to {out}")
    return dg.MaterializeResult(metadata={"path": str(out), **counts})
