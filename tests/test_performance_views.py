"""The investor performance views on the built sample deal, each recomputed here in plain Python
from the receivable-periods and the schedule: roll rates, recoveries, stratifications, loss
curves by origination quarter and prepayment to date."""

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest
from conftest import DEAL_ID

TEN = Decimal("0.0000000001")


def percent(numerator, denominator) -> Decimal:
    return (Decimal(numerator) * 100 / Decimal(denominator)).quantize(TEN, ROUND_HALF_UP)


@pytest.fixture(scope="module")
def con(built_warehouse):
    connection = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    yield connection
    connection.close()


def rows(con, sql, *params) -> list[dict]:
    result = con.execute(sql, list(params))
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


@pytest.fixture(scope="module")
def periods(con) -> list[dict]:
    return rows(
        con,
        "select p.*, c.collection_period_end_date from marts.fct_receivable_period p "
        "join staging.stg_deal__payment_calendar c using (deal_id, collection_period) "
        "where deal_id = ? order by receivable_id, period_number",
        DEAL_ID,
    )


@pytest.fixture(scope="module")
def schedule(con) -> dict[str, dict]:
    return {
        r["receivable_id"]: r
        for r in rows(
            con,
            "select * from staging.stg_servicer__receivable_schedule where deal_id = ?",
            DEAL_ID,
        )
    }


def _state(row: dict) -> str:
    if row["is_default_period"]:
        return "defaulted"
    if row["is_purchase_period"]:
        return "repurchased"
    if row["ending_balance"] == 0:
        end, maturity = row["collection_period_end_date"], row["maturity_date"]
        return (
            "paid to maturity"
            if (end.year, end.month) >= (maturity.year, maturity.month)
            else "prepaid"
        )
    return _bucket(row["days_past_due"])


def _bucket(days) -> str:
    days = days or 0
    for limit, name in ((0, "current"), (30, "1-30"), (60, "31-60"), (90, "61-90")):
        if days <= limit:
            return name
    return "91-120"


def test_roll_rates_follow_each_receivable_from_one_period_to_the_next(con, periods, schedule):
    expected: dict[tuple, list] = defaultdict(lambda: [0, Decimal(0)])
    by_receivable = defaultdict(list)
    for row in periods:
        by_receivable[row["receivable_id"]].append(row)
    for receivable_id, history in by_receivable.items():
        before = None
        for row in history:
            if row["period_number"] == 1:
                origin = (
                    _bucket(schedule[receivable_id]["cutoff_days_past_due"]),
                    schedule[receivable_id]["cutoff_principal_balance"],
                )
            elif (
                before is not None
                and before["period_number"] == row["period_number"] - 1
                and before["ending_balance"] > 0
            ):
                origin = (_state(before), before["ending_balance"])
            else:
                origin = None
            if origin:
                cell = expected[(row["period_number"], origin[0], _state(row))]
                cell[0] += 1
                cell[1] += origin[1]
            before = row
    found = {
        (r["period_number"], r["from_state"], r["to_state"]): [
            r["receivable_count"],
            r["from_balance"],
        ]
        for r in rows(con, "select * from marts.rpt_roll_rates where deal_id = ?", DEAL_ID)
    }
    assert found == {k: v for k, v in expected.items()}
    shares = rows(
        con,
        "select period_number, from_state, sum(balance_share_percent) as total "
        "from marts.rpt_roll_rates where deal_id = ? group by all",
        DEAL_ID,
    )
    assert all(abs(s["total"] - 100) < Decimal("0.000001") for s in shares)
    assert {"prepaid", "defaulted"} <= {k[2] for k in found}


def test_recoveries_by_default_cohort(con, periods):
    defaulted, proceeds, lag = defaultdict(Decimal), defaultdict(Decimal), defaultdict(Decimal)
    default_period = {
        r["receivable_id"]: r["period_number"] for r in periods if r["is_default_period"]
    }
    for row in periods:
        if row["is_default_period"]:
            defaulted[row["period_number"]] += row["defaulted_principal_amount"]
        start = default_period.get(row["receivable_id"])
        if (
            start is not None
            and row["period_number"] >= start
            and row["liquidation_proceeds_amount"]
        ):
            proceeds[start] += row["liquidation_proceeds_amount"]
            lag[start] += row["liquidation_proceeds_amount"] * (row["period_number"] - start)
    found = rows(con, "select * from marts.rpt_recoveries where deal_id = ?", DEAL_ID)
    assert {r["default_period_number"] for r in found} == set(defaulted) and found
    for r in found:
        n = r["default_period_number"]
        assert r["defaulted_principal_amount"] == defaulted[n]
        assert r["liquidation_proceeds_amount"] == proceeds[n]
        assert r["recovery_rate_percent"] == percent(proceeds[n], defaulted[n])
        if proceeds[n]:
            assert r["weighted_recovery_lag_months"] == (lag[n] / proceeds[n]).quantize(
                TEN, ROUND_HALF_UP
            )


def test_stratification_at_the_cutoff_and_after_a_period(con, periods, schedule):
    found = rows(
        con,
        "select * from marts.rpt_stratification where deal_id = ? and period_number in (0, 12)",
        DEAL_ID,
    )
    cutoff = [r for r in found if r["period_number"] == 0 and r["dimension"] == "state"]
    by_state = defaultdict(lambda: [0, Decimal(0)])
    for s in schedule.values():
        by_state[s["obligor_state"]][0] += 1
        by_state[s["obligor_state"]][1] += s["cutoff_principal_balance"]
    assert {r["bucket"]: [r["receivable_count"], r["principal_balance"]] for r in cutoff} == {
        k: v for k, v in by_state.items()
    }
    total = sum(v[1] for v in by_state.values())
    for r in cutoff:
        assert r["balance_share_percent"] == percent(by_state[r["bucket"]][1], total)
    # after period 12: the receivables outstanding, their APR weighted by balance
    outstanding = [p for p in periods if p["period_number"] == 12 and p["is_outstanding"]]
    vehicles = {
        r["bucket"]: r for r in found if r["period_number"] == 12 and r["dimension"] == "vehicle"
    }
    for kind, row in vehicles.items():
        members = [
            p for p in outstanding if schedule[p["receivable_id"]]["vehicle_new_used"] == kind
        ]
        balance = sum(p["ending_balance"] for p in members)
        weighted = sum(p["ending_balance"] * schedule[p["receivable_id"]]["apr"] for p in members)
        assert row["receivable_count"] == len(members) and row["principal_balance"] == balance
        assert row["weighted_average_apr_percent"] == percent(weighted, balance)
    dimensions = {r["dimension"] for r in found}
    assert dimensions == {"credit score", "APR", "original term", "remaining term", "vehicle",
                          "model year", "state"}  # fmt: skip


def test_loss_curves_by_origination_quarter(con, periods, schedule):
    quarter = {
        k: s["origination_date"].replace(
            month=(s["origination_date"].month - 1) // 3 * 3 + 1, day=1
        )
        for k, s in schedule.items()
    }
    cutoff = defaultdict(Decimal)
    for k, s in schedule.items():
        cutoff[quarter[k]] += s["cutoff_principal_balance"]
    last = max(p["period_number"] for p in periods)
    gross, net = defaultdict(Decimal), defaultdict(Decimal)
    for p in periods:
        gross[quarter[p["receivable_id"]]] += p["defaulted_principal_amount"]
        net[quarter[p["receivable_id"]]] += (
            p["defaulted_principal_amount"] - p["liquidation_proceeds_amount"]
        )
    found = rows(
        con, "select * from marts.rpt_vintage_curves where deal_id = ? and period_number = ?",
        DEAL_ID, last,
    )  # fmt: skip
    assert found and {r["origination_quarter"] for r in found} <= set(cutoff)
    for r in found:
        q = r["origination_quarter"]
        assert r["cohort_cutoff_balance"] == cutoff[q]
        assert r["cumulative_gross_loss_percent"] == percent(gross[q], cutoff[q])
        assert r["cumulative_net_loss_percent"] == percent(max(net[q], 0), cutoff[q])


def test_prepayment_to_date(con):
    found = rows(
        con, "select * from marts.rpt_prepayment_speeds where deal_id = ? order by period_number",
        DEAL_ID,
    )  # fmt: skip
    initial = con.execute(
        "select initial_pool_balance from staging.stg_deal__deals where deal_id = ?", [DEAL_ID]
    ).fetchone()[0]
    running = Decimal(0)
    for r in found:
        running += r["prepaid_principal_amount"]
        assert r["cumulative_prepaid_principal_amount"] == running
        assert r["cumulative_prepaid_percent_of_initial_pool"] == percent(running, initial)
    assert running > 0


def test_a_recomputed_period_without_strata_keeps_none(built_warehouse, tmp_path):
    """delete+insert deletes only the keys of its new rows: the window's rows are deleted first
    (macros/incremental.sql, delete_window_rows), so a period a build recomputes and finds no
    receivable outstanding in keeps no strata, and another trust's rows stay as they were."""
    work = tmp_path / "warehouse.duckdb"
    shutil.copyfile(built_warehouse["work"], work)
    columns = "period_number, collection_period, dimension, bucket, receivable_count"
    with duckdb.connect(str(work)) as connection:
        (last,) = connection.execute(
            "select max(collection_period) from marts.rpt_stratification "
            "where deal_id = ? and period_number > 0",
            [DEAL_ID],
        ).fetchone()
        before = connection.execute(
            f"select {columns} from marts.rpt_stratification where deal_id = ? "
            "and collection_period in ('cutoff', ?) order by all",
            [DEAL_ID, last],
        ).fetchall()
        # rows an earlier build left for a period that now has none, and another trust's
        for deal_id in (DEAL_ID, "another-trust"):
            connection.execute(
                "insert into marts.rpt_stratification select ? as deal_id, 999, '2099-01', "
                "* exclude (deal_id, period_number, collection_period) "
                "from marts.rpt_stratification where deal_id = ? and period_number = 1",
                [deal_id, DEAL_ID],
            )
    subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), "run", "--quiet", "--select",
         "rpt_stratification",
         "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")],
        cwd=Path(__file__).resolve().parents[1] / "dbt",
        env={**os.environ, "CAOT_WAREHOUSE_WORK": str(work),
             "CAOT_REBUILD_FROM": json.dumps({DEAL_ID: last})},
        check=True,
    )  # fmt: skip
    with duckdb.connect(str(work), read_only=True) as connection:
        left = connection.execute(
            "select deal_id from marts.rpt_stratification where collection_period = '2099-01' "
            "group by deal_id"
        ).fetchall()
        after = connection.execute(
            f"select {columns} from marts.rpt_stratification where deal_id = ? "
            "and collection_period in ('cutoff', ?) order by all",
            [DEAL_ID, last],
        ).fetchall()
    assert left == [("another-trust",)]
    assert after == before and before  # the window's period and the cutoff, computed again
