"""What the command line launches (pipeline.py): the partitions of the delivered periods, as one
run of the job the schedule, the sensor and the UI run, and the outcome of that run."""

import sys

import dagster as dg
import duckdb

from dagster_project import warehouse as warehouse_files
from dagster_project.deal import load_shelf
from dagster_project.definitions import defs
from dagster_project.defs.ingestion import ACCEPT_DEAL_CHANGES
from dagster_project.ingestion.deliveries import delivered_periods, not_trusts, trust_dir
from dagster_project.partitions import box_tags

QUIET = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
EX_TEMPFAIL = 75  # another run holds the warehouse: try again later
EX_REJECTED = 3  # published what could be, but a delivery was rejected or a deal file held


def delivered(inputs, shelf, trusts: list[str] | None, periods: list[str] | None):
    """Each trust's delivered Collection Periods (folders under <inputs>/<deal_id>/deliveries),
    narrowed to `trusts` and `periods`; says which folders it ignores and why."""
    out: dict[str, list[str]] = {}
    for folder in not_trusts(inputs, shelf):
        print(f"ignored: {folder}: not a trust of the shelf (no deal file)", file=sys.stderr)
    for deal in shelf:
        if trusts and deal.deal_id not in trusts:
            continue
        found = delivered_periods(trust_dir(inputs, deal.deal_id) / "deliveries", deal)
        for problem in found.ignored:
            print(f"ignored: {problem}", file=sys.stderr)
        chosen = [p for p in found.periods if not periods or p in periods]
        if chosen:
            out[deal.deal_id] = chosen
    return out


def launch(args, instance: dg.DagsterInstance) -> int:
    shelf = load_shelf()
    known = {d.deal_id for d in shelf}
    unknown = sorted(set(args.trust or []) - known)
    if unknown:
        print(
            f"not a trust of the shelf: {', '.join(unknown)} (deal files: {sorted(known)})",
            file=sys.stderr,
        )
        return 2
    definitions = defs()
    run_config = {
        **QUIET,
        "resources": {"warehouse": {"config": {"wait_seconds": args.wait}}},
    }
    if args.rebuild:
        tags = {ACCEPT_DEAL_CHANGES: "true"} if args.accept_deal_changes else {}
        job = definitions.resolve_job_def("rebuild_warehouse")
        label = "rebuild of every trust"
    else:
        inputs = warehouse_files.input_dir()
        periods = delivered(inputs, shelf, args.trust, args.period)
        if not periods:
            print(f"no deliveries found under {inputs}/<deal_id>/deliveries/", file=sys.stderr)
            return 1
        first = min(p for ps in periods.values() for p in ps)
        last = max(p for ps in periods.values() for p in ps)
        tags = box_tags(list(periods), first, last)
        job = definitions.resolve_job_def("monthly_servicing_run")
        label = "; ".join(
            f"{deal_id} {ps[0]}..{ps[-1]} ({len(ps)} periods)" for deal_id, ps in periods.items()
        )
    print(f"{job.name}: {label}", flush=True)
    result = job.execute_in_process(
        instance=instance, run_config=run_config, tags=tags, raise_on_error=False
    )
    if not result.success:
        busy = any(
            "another run is writing" in str(event.event_specific_data)
            for event in result.all_events
            if event.is_failure
        )
        print(
            f"{job.name} FAILED (run {result.run_id}); see the messages above or the Dagster UI",
            file=sys.stderr,
        )
        return EX_TEMPFAIL if busy else 1
    published = warehouse_files.published_path()
    print(f"warehouse published at {published}")
    report_withheld(published)
    rejected = [
        evaluation
        for evaluation in result.get_asset_check_evaluations()
        if evaluation.check_name == "deliveries_accepted" and not evaluation.passed
    ]
    for evaluation in rejected:
        held = evaluation.metadata.get("schedules_held")
        print(
            f"deliveries REJECTED: {evaluation.metadata['rejected'].value}"
            + (
                f"; Receivable Schedules held: {held.value}"
                if held and held.value != "none"
                else ""
            )
            + f"\n{evaluation.metadata['first_findings'].value}",
            file=sys.stderr,
        )
    held = [
        evaluation
        for evaluation in result.get_asset_check_evaluations()
        if evaluation.check_name == "deal_files_accepted" and not evaluation.passed
    ]
    for evaluation in held:
        print(
            f"deal files HELD: {evaluation.metadata['deal_files_held'].value}\n"
            f"{evaluation.metadata['reasons'].value}",
            file=sys.stderr,
        )
    return EX_REJECTED if rejected or held else 0


def report_withheld(published) -> None:
    """Say which certificates the published run withholds, and why."""
    with duckdb.connect(str(published), read_only=True) as con:
        withheld = con.execute(
            "select deal_id, distribution_date, withheld_reason from quality.certificate_gate "
            "where not is_publishable order by deal_id, distribution_date"
        ).fetchall()
    for deal_id, date, reason in withheld:
        print(f"certificate of {deal_id} for {date} WITHHELD: {reason}", file=sys.stderr)
