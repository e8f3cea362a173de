"""Run each Collection Period on its Determination Date (Art. I: the ninth of the month after the
period, or the next Business Day), when the Servicer's Certificate is due (3.9).

The schedule ticks every morning at 07:00 New York time (the agreement's Business Days are New
York's, among others) and decides itself, from the deal's Business Day calendar, whether today
is a Determination Date: a cron expression cannot follow holiday shifts.
"""

import datetime as dt

import dagster as dg

from dagster_project.business_calendar import period_determined_on
from dagster_project.deal import Deal, load_deal
from dagster_project.ingestion.monthly_job import monthly_servicing_job

TIMEZONE = "America/New_York"


def determination_run(deal: Deal, day: dt.date) -> dg.RunRequest | dg.SkipReason:
    period = period_determined_on(deal, day)
    if period is None:
        return dg.SkipReason(f"{day} is not a Determination Date of {deal.deal_id}")
    return dg.RunRequest(
        run_key=f"determination-{period.collection_period}",
        partition_key=period.collection_period,
        tags={"caot/determination_date": period.determination_date.isoformat()},
    )


@dg.schedule(
    job=monthly_servicing_job,
    cron_schedule="0 7 * * *",
    execution_timezone=TIMEZONE,
    description="On each Determination Date (the 9th, or the next Business Day), run the "
    "Collection Period that ended last month.",
)
def determination_date_schedule(context: dg.ScheduleEvaluationContext):
    return determination_run(load_deal(), context.scheduled_execution_time.date())
