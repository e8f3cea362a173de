"""The monthly schedule on Determination Dates, the inbox sensor, runs launched from the inbox."""

import datetime as dt
import json
import shutil
import zoneinfo

import dagster as dg
import duckdb
import pytest

from dagster_project.deal import load_deal
from dagster_project.ingestion import inbox_sensor
from dagster_project.ingestion.determination_schedule import (
    TIMEZONE,
    determination_date_schedule,
    determination_run,
)

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


def test_the_schedule_runs_each_period_on_its_determination_date_for_a_year():
    day, runs = dt.date(2016, 1, 1), {}
    while day.year == 2016:
        result = determination_run(DEAL, day)
        if isinstance(result, dg.RunRequest):
            runs[day] = result.partition_key
        else:
            assert "not a Determination Date" in result.skip_message
        day += dt.timedelta(days=1)
    assert runs == DETERMINATION_DATES_2016


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
        assert result.partition_key == expected
        assert result.run_key == f"determination-{expected}"


@pytest.fixture
def inbox(tmp_path, monkeypatch):
    folder = tmp_path / "inbox"
    folder.mkdir()
    monkeypatch.setenv("CAOT_INBOX_DIR", str(folder))
    monkeypatch.setenv("CAOT_WAREHOUSE", str(tmp_path / "no_warehouse_yet.duckdb"))
    return folder


def _deliver(small_deal, inbox, period: str, files=("loan_status", "payment_transactions")):
    target = inbox / period
    target.mkdir()
    for stem in files:
        shutil.copyfile(small_deal / "deliveries" / period / f"{stem}.csv", target / f"{stem}.csv")
    return target


def test_a_complete_new_delivery_launches_its_partition_once(small_deal, inbox):
    folder = _deliver(small_deal, inbox, "2016-03")
    result = inbox_sensor.monthly_delivery_sensor(dg.build_sensor_context())
    assert len(result) == 1
    assert result[0].partition_key == "2016-03"
    assert result[0].tags[inbox_sensor.DELIVERY_TAG] == str(folder)
    # the next tick, with the cursor the first one left, reports a duplicate and runs nothing
    cursor = json.dumps(sorted({inbox_sensor.decide(folder, set(), set()).fingerprint}))
    again = inbox_sensor.monthly_delivery_sensor(dg.build_sensor_context(cursor=cursor))
    assert isinstance(again, dg.SkipReason) and "duplicate" in again.skip_message


def test_an_incomplete_delivery_is_reported_not_run(small_deal, inbox):
    _deliver(small_deal, inbox, "2016-04", files=("loan_status",))
    (inbox / "2016-05").mkdir()
    (inbox / "2016-05" / "loan_status.csv").write_text("")
    (inbox / "2016-05" / "payment_transactions.csv").write_text("assetNumber\n")
    (inbox / "notes").mkdir()
    result = inbox_sensor.monthly_delivery_sensor(dg.build_sensor_context())
    assert isinstance(result, dg.SkipReason)
    assert "2016-04: incomplete, missing payment_transactions" in result.skip_message
    assert "2016-05: incomplete, empty loan_status" in result.skip_message
    assert "notes: not a Collection Period" in result.skip_message


def test_a_delivery_already_loaded_is_a_duplicate(small_deal, inbox, built_warehouse):
    folder = _deliver(small_deal, inbox, "2016-06")
    loaded = inbox_sensor.loaded_fingerprints(built_warehouse["published"])
    decision = inbox_sensor.decide(folder, set(), loaded)
    assert not decision.launch and "duplicate" in decision.problem
    # a corrected file for that period is new: a restatement, and it is launched
    path = folder / "payment_transactions.csv"
    path.write_text(path.read_text().replace("\n", "\r\n", 1))
    assert inbox_sensor.decide(folder, set(), loaded).launch


def test_a_run_launched_from_the_inbox_loads_the_files_where_they_landed(
    small_deal, inbox, tmp_path, monkeypatch
):
    from dagster_project.definitions import defs
    from dagster_project.ingestion.assets import (
        deal_terms,
        market_inputs,
        monthly_tape,
        receivable_schedule,
    )
    from dagster_project.resources import WarehouseResource

    folder = _deliver(small_deal, inbox, "2015-10")
    warehouse = WarehouseResource(
        work_path=str(tmp_path / "work.duckdb"),
        published_path=str(tmp_path / "warehouse.duckdb"),
        input_dir=str(tmp_path / "nowhere"),  # the schedule comes from here, the tape must not
    )
    shutil.copytree(small_deal, tmp_path / "nowhere", ignore=shutil.ignore_patterns("deliveries"))
    monkeypatch.setenv("CAOT_GX_DIR", str(tmp_path / "gx"))
    resources = {**defs.resources, "warehouse": warehouse}
    with dg.instance_for_test() as instance:
        assert dg.materialize(
            [deal_terms, receivable_schedule, market_inputs], resources=resources, instance=instance
        ).success
        assert dg.materialize(
            [monthly_tape],
            partition_key="2015-10",
            tags={inbox_sensor.DELIVERY_TAG: str(folder)},
            resources=resources,
            instance=instance,
        ).success
    con = duckdb.connect(str(tmp_path / "work.duckdb"), read_only=True)
    paths = con.execute(
        "select file_path from raw.deliveries where scope = '2015-10' and status = 'loaded'"
    ).fetchall()
    con.close()
    assert sorted(p[0] for p in paths) == sorted(str(p) for p in folder.iterdir())
