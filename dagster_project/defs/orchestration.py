"""How runs happen: the jobs, the Determination-Date schedule and the inbox sensor.

- monthly_servicing_run (partitioned by trust and Collection Period): the trusts' deal terms,
  schedules and market inputs (a no-op when unchanged), the partitions' tapes, then everything
  that depends on them: the dbt models (the loan-level ones recompute only the window of the
  run's periods, the waterfall each trust from its first date whose inputs changed, the others
  are views or small tables), the certificate gate and publication
  with the reports. A run over several partitions (a backfill, single run) loads them all, then
  builds once. The schedule, the sensor, the command line and the UI all run this job.
- rebuild_warehouse (no partitions): every asset but the tapes, every dbt row recomputed: after a
  change to the dbt code, a restated Receivable Schedule or an accepted deal-file change.

One run writes the warehouse at a time (the resource holds the working file's lock; the queued
run coordinator of dagster_home/dagster.yaml runs one at a time), in one process
(STACK.md: DuckDB allows one writing process).
"""

import datetime as dt

import dagster as dg

from dagster_project.business_calendar import period_determined_on
from dagster_project.checksums import sha256
from dagster_project.deal import Deal, load_shelf
from dagster_project.defs.ingestion import monthly_tapes
from dagster_project.ingestion import schemas
from dagster_project.ingestion.deliveries import (
    AmbiguousDelivery,
    delivered_periods,
    inbox_dir,
    not_trusts,
    reference_file,
    tape_files,
)
from dagster_project.ingestion.ex102 import Ex102Error
from dagster_project.partitions import TRUST_PERIODS, box_tags, key
from dagster_project.warehouse import input_dir

TIMEZONE = "America/New_York"
DELIVERY_TAG = "caot/delivery_dir"

TAPES = dg.AssetSelection.assets(monthly_tapes)

monthly_servicing_run = dg.define_asset_job(
    "monthly_servicing_run",
    selection=dg.AssetSelection.all(),
    partitions_def=TRUST_PERIODS,
    executor_def=dg.in_process_executor,
    description="Load trusts' Collection Period deliveries and rebuild, validate and publish "
    "what depends on them. A run of a period recomputes it and every later one of its trust "
    "(balances and accounts carry forward).",
)

rebuild_warehouse = dg.define_asset_job(
    "rebuild_warehouse",
    selection=dg.AssetSelection.all() - TAPES,
    executor_def=dg.in_process_executor,
    description="Recompute every row from what is loaded (after a dbt code change, a restated "
    "Receivable Schedule or an accepted deal-file change), validate and publish.",
)


def determination_run(deals: list[Deal], day: dt.date) -> dg.RunRequest | dg.SkipReason:
    """The run of every trust whose Determination Date (Art. I: the 9th, or the next Business
    Day) is `day`: one run over those trusts and the Collection Period that ended last month."""
    due = [(deal, period_determined_on(deal, day)) for deal in deals]
    due = [(deal, period) for deal, period in due if period is not None]
    if not due:
        return dg.SkipReason(f"{day} is not a Determination Date of any trust")
    period = due[0][1].collection_period
    trusts = [deal.deal_id for deal, p in due if p.collection_period == period]
    return dg.RunRequest(
        run_key=f"determination-{period}-{'+'.join(trusts)}",
        tags={**box_tags(trusts, period, period), "caot/determination_date": day.isoformat()},
    )


@dg.schedule(
    job=monthly_servicing_run,
    cron_schedule="0 7 * * *",
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Every morning at 07:00 New York time: on a Determination Date (the 9th, or the "
    "next Business Day, from the deal's calendar: a cron expression cannot follow holiday "
    "shifts), run every outstanding trust's Collection Period that ended last month.",
)
def determination_date_schedule(context: dg.ScheduleEvaluationContext):
    return determination_run(load_shelf(), context.scheduled_execution_time.date())


def inbox_decisions(deals: list[Deal]):
    """(folder, partition key, SHA-256 of its files, problem) for every delivery folder in the
    inbox: a complete delivery (the period's files present and not empty) is to be run; anything
    else is reported, not run. Whether its files were loaded before is the loader's answer. The
    SHA-256 covers the trust's Receivable Schedule too: a delivery that waited for a rejected
    schedule (ingestion/loads.py) runs again when a corrected schedule arrives."""
    inbox = inbox_dir()
    out = []
    for deal in deals:
        found = delivered_periods(inbox / deal.deal_id, deal)
        schedule = reference_file(input_dir(), deal.deal_id, schemas.RECEIVABLE_SCHEDULE)
        schedule_digest = sha256(schedule) if found.periods and schedule.exists() else ""
        for problem in found.ignored:
            out.append((None, None, None, problem))
        for period in found.periods:
            folder = inbox / deal.deal_id / period
            try:
                files = {schema.kind: path for schema, path in tape_files(folder)}
            except (Ex102Error, AmbiguousDelivery) as error:
                out.append((folder, None, None, str(error)))
                continue
            absent = [kind for kind, path in files.items() if not path.exists()]
            empty = [
                kind for kind, path in files.items() if path.exists() and path.stat().st_size == 0
            ]
            if absent or empty:
                what = ", ".join([f"missing {k}" for k in absent] + [f"empty {k}" for k in empty])
                out.append((folder, None, None, f"{folder}: incomplete, {what}"))
                continue
            digest = "+".join([*(sha256(files[kind]) for kind in sorted(files)), schedule_digest])
            out.append((folder, key(deal.deal_id, period), digest, None))
    for folder in not_trusts(inbox, deals):
        out.append((None, None, None, f"{folder}: not a trust of the shelf (no deal file)"))
    return out


@dg.sensor(
    job=monthly_servicing_run,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Launch a trust's Collection Period run when its complete, new delivery lands "
    "in the inbox (data/inbox/<deal_id>/<YYYY-MM>/); incomplete or duplicate deliveries and "
    "folders that are not a trust's Collection Period are reported, not run.",
)
def monthly_delivery_sensor(context: dg.SensorEvaluationContext):
    requests, problems = [], []
    for folder, partition_key, digest, problem in inbox_decisions(load_shelf()):
        if problem:
            problems.append(problem)
            continue
        # one run per partition and file contents: Dagster launches a run key once, so the same
        # files are not run again and a corrected delivery (a restatement) is
        requests.append(
            dg.RunRequest(
                run_key=f"inbox-{partition_key}-{digest}",
                partition_key=partition_key,
                tags={DELIVERY_TAG: str(folder)},
            )
        )
    if requests:
        for problem in problems:
            context.log.warning(problem)
        return requests
    return dg.SkipReason("; ".join(problems) if problems else "no delivery in the inbox")
