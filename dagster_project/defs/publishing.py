"""Publication: the finished warehouse and the reports, together.

The reports are rendered from the working warehouse into a folder aside while the warehouse is
copied beside data/warehouse.duckdb (warehouse.publishing); once both are done the copy is renamed
over the published warehouse, then the reports folder is swapped in whole. A failure before the
swap leaves the previous warehouse and reports as they were; readers never see the new warehouse
beside old reports for longer than the rename between them. Certificates that change after their
first publication are recorded as new versions.
"""

import datetime as dt

import dagster as dg

from dagster_project import warehouse as warehouse_files
from dagster_project.certificate_versions import record_versions
from dagster_project.quality.validation import data_docs_index
from dagster_project.reports.writer import reports_dir, write_reports
from dagster_project.resources import WarehouseResource

PUBLISHED = dg.AssetKey(["published_warehouse"])
REPORTS = dg.AssetKey(["servicer_reports"])

# The latest certificate's figures shown on the asset page (Dagster plots numeric metadata
# across runs; floats there only feed the plots, the warehouse holds the exact DECIMALs).
HEADLINE = (
    "ending_pool_balance",
    "note_balance_after_amount",
    "available_funds_amount",
    "excess_collections_amount",
    "reserve_account_ending_balance",
    "overcollateralization_amount",
    "cumulative_net_loss_percent",
)


def headline_figures(con) -> dict:
    figures: dict = {}
    rows = con.execute(
        f"select dates.deal_id, {', '.join('dates.' + c for c in HEADLINE)} "
        "from marts.fct_distribution_date as dates "
        "inner join quality.certificate_gate as gate using (deal_id, distribution_date) "
        "where gate.is_publishable "
        "qualify row_number() over "
        "(partition by dates.deal_id order by dates.period_number desc) = 1"
    ).fetchall()
    for deal_id, *values in rows:
        for name, value in zip(HEADLINE, values, strict=True):
            if value is not None:
                figures[f"{deal_id} {name}"] = dg.MetadataValue.float(float(value))
    return figures


@dg.multi_asset(
    name="publication",
    specs=[
        dg.AssetSpec(
            PUBLISHED,
            group_name="publishing",
            deps=[dg.AssetKey(["quality", "certificate_gate"])],
            description="data/warehouse.duckdb: the finished warehouse, swapped in atomically.",
        ),
        dg.AssetSpec(
            REPORTS,
            group_name="publishing",
            deps=[dg.AssetKey(["quality", "certificate_gate"])],
            description="data/reports/: each trust's certificates and Statements to Noteholders "
            "(HTML and PDF), performance and auditor reports, and the shelf's index.",
        ),
    ],
)
def publication(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    with warehouse.connect() as con:
        versions = record_versions(con, dt.datetime.now(dt.UTC))
        figures = headline_figures(con)
    for deal_id, date, version in versions:
        if version > 1:
            context.log.warning(f"certificate of {deal_id} for {date} restated: version {version}")
    out = reports_dir()
    context.log.info(f"rendering the reports beside {out}")

    def build(folder):
        with warehouse_files.publishing(warehouse.work, warehouse.published):
            return write_reports(warehouse.work, folder, data_docs_index(), published=out)

    counts = warehouse_files.publish_folder(build, out)
    context.log.info(
        f"published {warehouse.published}; {counts['certificates']} certificates, "
        f"{counts['certificates_withheld']} withheld, reports in {out}"
    )
    yield dg.MaterializeResult(
        asset_key=PUBLISHED,
        metadata={
            "path": str(warehouse.published),
            "certificate_versions_recorded": len(versions),
            "certificates_restated": ", ".join(f"{d} {t}" for d, t, v in versions if v > 1)
            or "none",
            **figures,
        },
    )
    yield dg.MaterializeResult(asset_key=REPORTS, metadata={"path": str(out), **counts})
