"""The monthly schedule on Determination Dates, the inbox sensor, runs launched from the inbox."""

import datetime as dt
import shutil
import zoneinfo

import dagster as dg
import duckdb
import pytest
from conftest import DEAL_ID, deliveries

from dagster_project.deal import load_deal, load_shelf
from dagster_project.defs import orchestration
from dagster_project.defs.orchestration import (
    DELIVERY_TAG,
    TIMEZONE,
    determination_date_schedule,
    determination_run,
    inbox_decisions,
)
from dagster_project.partitions import key

DEAL = load_deal()

# Determination Dates of 2016: the 9th, or the next Business Day (Federal Reserve calendar)
DETERMINATION_DATES_2016 = {
    dt.date(2016, 1, 11): "2015-12",  # Saturday the 9th
    dt.date(2016, 2, 9): "2016-01",
    dt.date(2016, 3, 9): "2016-02",
    dt.date(2016, 4, 11): "2016-03",  # Saturday
    dt.date(2016, 5, 9): "2016-04",
    dt.date(2016, 6, 9): "2016-05",
    dt.date(2016, 7, 11): "2016-06",  # Saturday
    dt.date(2016, 8, 9): "2016-07",
    dt.date(2016, 9, 9): "2016-08",
    dt.date(2016, 10, 11): "2016-09",  # Sunday the 9th, then Columbus Day
    dt.date(2016, 11, 9): "2016-10",
    dt.date(2016, 12, 9): "2016-11",
}


def _period_of(request: dg.RunRequest) -> str:
    start = request.tags["dagster/asset_partition_range_start"]
    end = request.tags["dagster/asset_partition_range_end"]
    assert start.split("|")[1] == end.split("|")[1]
    return start.split("|")[1]


def test_the_schedule_runs_each_period_on_its_determination_date_for_a_year():
    day, runs = dt.date(2016, 1, 1), {}
    while day.year == 2016:
        result = determination_run([DEAL], day)
        if isinstance(result, dg.RunRequest):
            runs[day] = _period_of(result)
        else:
            assert "not a Determination Date" in result.skip_message
        day += dt.timedelta(days=1)
    assert runs == DETERMINATION_DATES_2016


def test_the_schedule_runs_every_outstanding_trust_of_the_shelf_in_one_run():
    shelf = load_shelf()
    request = determination_run(shelf, dt.date(2016, 3, 9))
    outstanding = [d.deal_id for d in shelf if d.first_collection_period <= dt.date(2016, 2, 1)
                   and d.final_scheduled_maturity_date > dt.date(2016, 3, 15)]  # fmt: skip
    assert request.tags["dagster/asset_partition_range_start"] == key(outstanding[0], "2016-02")
    assert request.tags["dagster/asset_partition_range_end"] == key(outstanding[-1], "2016-02")


@pytest.mark.parametrize(
    ("tick", "expected"),
    [
        (dt.datetime(2016, 10, 11, 7, 0), "2016-09"),
        (dt.datetime(2016, 10, 10, 7, 0), None),  # Columbus Day: no run
        (dt.datetime(2017, 9, 11, 7, 0), "2017-08"),  # Saturday the 9th
    ],
)
def test_the_dagster_schedule_decides_in_new_york_time(tick, expected):
    when = tick.replace(tzinfo=zoneinfo.ZoneInfo(TIMEZONE))
    context = dg.build_schedule_context(scheduled_execution_time=when)
    result = determination_date_schedule(context)
    if expected is None:
        assert isinstance(result, dg.SkipReason)
    else:
        assert _period_of(result) == expected
        assert result.run_key.startswith(f"determination-{expected}-")


@pytest.fixture
def inbox(tmp_path, monkeypatch):
    folder = tmp_path / "inbox"
    folder.mkdir()
    monkeypatch.setenv("CAOT_INBOX_DIR", str(folder))
    monkeypatch.setenv("CAOT_WAREHOUSE", str(tmp_path / "no_warehouse_yet.duckdb"))
    return folder


def _deliver(small_deal, inbox, period: str, files=("loan_status", "payment_transactions")):
    target = inbox / DEAL_ID / period
    target.mkdir(parents=True)
    for stem in files:
        shutil.copyfile(deliveries(small_deal) / period / f"{stem}.csv", target / f"{stem}.csv")
    return target


def _decision(folder):
    (found,) = [d for d in inbox_decisions([DEAL]) if d[0] == folder]
    return found


def test_a_complete_delivery_launches_its_partition_once_per_contents(small_deal, inbox):
    folder = _deliver(small_deal, inbox, "2016-03")
    result = orchestration.monthly_delivery_sensor(dg.build_sensor_context())
    assert len(result) == 1
    assert result[0].partition_key == key(DEAL_ID, "2016-03")
    assert result[0].tags[DELIVERY_TAG] == str(folder)
    # the next tick asks for the same run key, which Dagster launches only once
    again = orchestration.monthly_delivery_sensor(dg.build_sensor_context())
    assert [r.run_key for r in again] == [result[0].run_key]
    # a corrected file for that period is new contents: a restatement, another run
    path = folder / "payment_transactions.csv"
    path.write_text(path.read_text().replace("\n", "\r\n", 1))
    corrected = orchestration.monthly_delivery_sensor(dg.build_sensor_context())
    assert corrected[0].run_key != result[0].run_key
    assert corrected[0].partition_key == result[0].partition_key


def test_a_delivery_runs_again_when_its_trust_s_schedule_changes(
    small_deal, inbox, tmp_path, monkeypatch
):
    """A delivery that waited for a rejected Receivable Schedule (not loaded, not recorded) runs
    again when the corrected schedule arrives: the run key covers the trust's schedule."""
    inputs = tmp_path / "inputs"
    shutil.copytree(small_deal, inputs, ignore=shutil.ignore_patterns("deliveries"))
    monkeypatch.setenv("CAOT_INPUT_DIR", str(inputs))
    _deliver(small_deal, inbox, "2016-03")
    (first,) = orchestration.monthly_delivery_sensor(dg.build_sensor_context())
    schedule = inputs / DEAL_ID / "receivable_schedule.csv"
    schedule.write_text(schedule.read_text() + schedule.read_text().splitlines()[1] + "\n")
    (again,) = orchestration.monthly_delivery_sensor(dg.build_sensor_context())
    assert again.run_key != first.run_key and again.partition_key == first.partition_key


def test_an_incomplete_delivery_is_reported_not_run(small_deal, inbox):
    _deliver(small_deal, inbox, "2016-04", files=("loan_status",))
    (inbox / DEAL_ID / "2016-05").mkdir()
    (inbox / DEAL_ID / "2016-05" / "loan_status.csv").write_text("")
    (inbox / DEAL_ID / "2016-05" / "payment_transactions.csv").write_text("assetNumber\n")
    (inbox / DEAL_ID / "notes").mkdir()
    (inbox / DEAL_ID / "2017-07 (resent)").mkdir()
    (inbox / "caot-1999-1").mkdir()
    result = orchestration.monthly_delivery_sensor(dg.build_sensor_context())
    assert isinstance(result, dg.SkipReason)
    message = result.skip_message
    assert "2016-04: incomplete, missing payment_transactions" in message
    assert "2016-05: incomplete, empty loan_status" in message
    assert "notes: the folder name is not a Collection Period" in message
    assert "2017-07 (resent): the folder name is not a Collection Period" in message
    assert "caot-1999-1: not a trust of the shelf" in message


def test_a_run_launched_from_the_inbox_loads_the_files_where_they_landed(
    small_deal, inbox, tmp_path, monkeypatch
):
    from dagster_project.definitions import defs

    folder = _deliver(small_deal, inbox, "2015-10")
    nowhere = tmp_path / "nowhere"  # the schedule comes from here, the tape must not
    shutil.copytree(small_deal, nowhere, ignore=shutil.ignore_patterns("deliveries"))
    for name, value in {
        "CAOT_INPUT_DIR": nowhere,
        "CAOT_WAREHOUSE_WORK": tmp_path / "work.duckdb",
        "CAOT_WAREHOUSE": tmp_path / "warehouse.duckdb",
        "CAOT_REPORTS_DIR": tmp_path / "reports",
        "CAOT_GX_DIR": tmp_path / "gx",
    }.items():
        monkeypatch.setenv(name, str(value))
    job = defs().resolve_job_def("monthly_servicing_run")
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(
            instance=instance,
            partition_key=key(DEAL_ID, "2015-10"),
            tags={DELIVERY_TAG: str(folder)},
        )
    assert result.success
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
    paths = con.execute(
        "select file_path from raw.deliveries where scope = '2015-10' and status = 'loaded'"
    ).fetchall()
    con.close()
    assert sorted(p[0] for p in paths) == sorted(str(p) for p in folder.iterdir())


def test_the_command_line_says_which_delivery_folders_it_ignores(tmp_path, capsys):
    from dagster_project.launch import delivered

    folder = tmp_path / DEAL_ID / "deliveries"
    for name in ("2015-10", "2017-07 (resent)", "1999-01", "notes"):
        (folder / name).mkdir(parents=True)
    (tmp_path / "caot-2099-9" / "deliveries" / "2016-01").mkdir(parents=True)  # no deal file
    assert delivered(tmp_path, [DEAL], None, None) == {DEAL_ID: ["2015-10"]}
    printed = capsys.readouterr().err
    assert "caot-2099-9: not a trust of the shelf (no deal file)" in printed
    assert "2017-07 (resent): the folder name is not a Collection Period (YYYY-MM); not loaded" in (
        printed
    )
    assert f"1999-01: 1999-01 is not a Collection Period of {DEAL_ID}" in printed
    assert "notes: the folder name is not a Collection Period" in printed
