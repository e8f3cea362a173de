"""The shelf's partitions: (trust, Collection Period), from the deal files.

A partition key is "<deal_id>|<YYYY-MM>" (Dagster's multi-dimensional key: the dimension "deal",
one per deal file of the shelf, and the monthly dimension "period" from the first Collection
Period of the oldest trust to the last one the youngest can have). A trust has a Collection Period
only between its Cutoff Date and its Final Scheduled Maturity Date; the other keys of its row are
never run (the schedule, the sensor and the command line ask only for a trust's own periods).
A range of keys is a box: trusts from..to, periods from..to.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import dagster as dg

from dagster_project.business_calendar import add_months, payment_periods
from dagster_project.deal import Deal, load_shelf

DEAL, PERIOD = "deal", "period"


def trust_periods(deals: list[Deal]) -> dg.MultiPartitionsDefinition:
    first = min(d.first_collection_period for d in deals)
    last = max(payment_periods(d)[-1].collection_period_start.replace(day=1) for d in deals)
    return dg.MultiPartitionsDefinition(
        {
            DEAL: dg.StaticPartitionsDefinition([d.deal_id for d in deals]),
            PERIOD: dg.MonthlyPartitionsDefinition(
                start_date=first.strftime("%Y-%m"),
                end_date=add_months(last, 1).strftime("%Y-%m"),
                fmt="%Y-%m",
            ),
        }
    )


TRUST_PERIODS = trust_periods(load_shelf())


def key(deal_id: str, period: str) -> str:
    return dg.MultiPartitionKey({DEAL: deal_id, PERIOD: period})


@dataclass(frozen=True)
class TrustPeriod:
    deal_id: str
    period: str


def split(keys: Iterable[str]) -> list[TrustPeriod]:
    """Partition keys as (trust, Collection Period), in key order."""
    out = []
    for text in keys:
        deal_id, period = str(text).split("|")
        out.append(TrustPeriod(deal_id, period))
    return out


def run_partitions(context: dg.AssetExecutionContext) -> list[TrustPeriod] | None:
    """The (trust, Collection Period) keys of the run, for any asset of it (partitioned or not);
    None for a run without partitions (a full rebuild)."""
    if not (context.has_partition_key or context.has_partition_key_range):
        return None
    return split(context.partition_keys)


def box_tags(deal_ids: list[str], first: str, last: str) -> dict[str, str]:
    """Run tags for one run over trusts `deal_ids` (a range in the deal dimension) and the periods
    first..last (Dagster's partition-range tags)."""
    order = TRUST_PERIODS.get_partitions_def_for_dimension(DEAL).get_partition_keys()
    ordered = sorted(deal_ids, key=order.index)
    return {
        "dagster/asset_partition_range_start": key(ordered[0], first),
        "dagster/asset_partition_range_end": key(ordered[-1], last),
    }
