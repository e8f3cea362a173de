"""The monthly servicing run: one Collection Period's tapes, then everything downstream of them
(dbt models, the suites, publication, reports) for that partition."""

import dagster as dg

from dagster_project.ingestion.partitions import COLLECTION_PERIODS

monthly_servicing_job = dg.define_asset_job(
    "monthly_servicing_run",
    selection=dg.AssetSelection.all(),
    partitions_def=COLLECTION_PERIODS,
    description="Load one Collection Period's delivery and rebuild, validate and publish the "
    "warehouse and the certificate. A rerun of a period recomputes it and every later one (the "
    "models carry balances and accounts forward).",
)
