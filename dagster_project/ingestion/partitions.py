"""Monthly partitions keyed by Collection Period (YYYY-MM), from the deal file's dates."""

import dagster as dg

from dagster_project.business_calendar import add_months, payment_periods
from dagster_project.deal import Deal, load_deal


def collection_period_partitions(deal: Deal) -> dg.MonthlyPartitionsDefinition:
    periods = payment_periods(deal)
    last = periods[-1].collection_period_start.replace(day=1)
    return dg.MonthlyPartitionsDefinition(
        start_date=deal.first_collection_period.strftime("%Y-%m"),
        end_date=add_months(last, 1).strftime("%Y-%m"),
        fmt="%Y-%m",
    )


COLLECTION_PERIODS = collection_period_partitions(load_deal())
