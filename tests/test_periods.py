"""Periods missing, late, restated (well and badly) or unreadable, on the small deal's first year:
the certificates that can be published are, the others are withheld with the reason, restated
ones become new versions, and the warehouse equals one built from scratch."""

import csv
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import DEAL_ID, deliveries
from first_year import PERIODS, assert_consistent, delivered
from pipeline_process import differences_from_a_full_build, pipeline_env, query, run_here

from dagster_project.deal import DEFAULT_DEAL_FILE, DEFAULT_DEALS_DIR


def set_delinquency(path: Path, days: int) -> str:
    """Make one current, outstanding receivable `days` past due (nothing else changes)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    row = next(
        r
        for r in rows
        if r["loanStatus"] == "current"
        and r["currentDelinquencyStatus"] == "0"
        and float(r["reportingPeriodActualEndBalanceAmount"]) > 5000
    )
    row["currentDelinquencyStatus"] = str(days)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return row["assetNumber"]


def shift_a_payment(path: Path, amount: str) -> str:
    """Add `amount` to one obligor payment (the tape's reported balances stay as they were)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    row = next(r for r in rows if r["transactionType"] == "payment")
    row["transactionAmount"] = str(Decimal(row["transactionAmount"]) + Decimal(amount))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return row["assetNumber"]


def gate(folder: Path) -> dict:
    return dict(
        query(
            folder / "warehouse.duckdb",
            "select collection_period, is_publishable from quality.certificate_gate",
        )
    )


def distribution_date(folder: Path, period: str):
    return query(
        folder / "warehouse.duckdb",
        "select distribution_date from staging.stg_deal__payment_calendar "
        "where deal_id = ? and collection_period = ?",
        [DEAL_ID, period],
    )[0][0]


@pytest.mark.slow
def test_a_missing_period_then_its_late_delivery_and_a_restated_market_input(inputs, tmp_path):
    env = pipeline_env(inputs, tmp_path)
    periods = delivered(inputs)
    late = periods[8]
    held = tmp_path / "held_back"
    shutil.move(deliveries(inputs) / late, held)

    # 1. a period missing: the ones after it are withheld, the ones before publish
    first = run_here(env)
    assert first.returncode == 0, first.stderr[-3000:]
    status = gate(tmp_path)
    assert [status[p] for p in periods[:8]] == [True] * 8
    assert [status[p] for p in periods[9:]] == [False] * 3
    assert "WITHHELD" in first.stderr and f"no tape delivered for {late}" in first.stderr
    reports = tmp_path / "reports" / DEAL_ID
    after_gap = distribution_date(tmp_path, periods[9])
    assert "Withheld" in (reports / "certificates" / f"certificate_{after_gap}.html").read_text()

    # 2. it arrives late and runs alone (its partition, as the sensor launches it): everything
    # publishes, version 1 of every certificate, built incrementally from the late period on
    shutil.move(held, deliveries(inputs) / late)
    second = run_here(env, "--period", late)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f'CAOT_REBUILD_FROM={{"{DEAL_ID}": "{late}"}}' in second.stdout + second.stderr
    assert_consistent(tmp_path, inputs)
    versions = query(
        tmp_path / "warehouse.duckdb",
        "select distribution_date, max(version) from history.certificate_versions group by 1",
    )
    assert len(versions) == PERIODS and {v for _d, v in versions} == {1}
    work = tmp_path / "work" / "warehouse.duckdb"
    # (compared with a build from scratch after step 3, which keeps this build's rows but the
    # waterfall's from the date three periods before the last, the late period's date)

    # 3. a restated market input for an earlier date (the floating index three periods before
    # the last), in a run of the last period only: the floating class's interest of that date
    # follows, and so does every date after it (the waterfall is computed again from the first
    # date whose inputs changed): the warehouse equals a build from scratch
    rate_date = distribution_date(tmp_path, periods[-4])
    floating_interest = (
        "select monthly_interest_amount from marts.fct_note_distribution "
        "where class_id = 'A-2b' and distribution_date = ?"
    )
    before = query(work, floating_interest, [rate_date])
    rates = inputs / DEAL_ID / "index_rates.csv"
    rows = rates.read_text().splitlines()
    rows = [r.rsplit(",", 1)[0] + ",0.0123456" if f",{rate_date}," in r else r for r in rows]
    rates.write_text("\n".join(rows) + "\n")
    market = run_here(env, "--period", periods[-1])
    assert market.returncode == 0, market.stderr[-3000:]
    assert query(work, floating_interest, [rate_date]) != before
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}


@pytest.mark.slow
def test_restatements_good_bad_and_unreadable(inputs, tmp_path):
    env = pipeline_env(inputs, tmp_path)
    periods = delivered(inputs)
    # 0. a period whose first delivery is rejected: it and the periods after it are withheld
    # with the reason, the ones before publish, the run says so (exit status 3)
    rejected_first = periods[10]
    set_delinquency(deliveries(inputs) / rejected_first / "loan_status.csv", -3)
    first = run_here(env)
    assert first.returncode == 3, first.stderr[-3000:]
    status = gate(tmp_path)
    assert [status[p] for p in periods] == [True] * 10 + [False] * 2
    assert f"the delivery for {rejected_first} was rejected" in first.stderr
    assert "negative" in first.stderr
    reports = tmp_path / "reports" / DEAL_ID
    work = tmp_path / "work" / "warehouse.duckdb"
    index = (reports / "index.html").read_text()
    assert "Deliveries rejected" in index and "nothing loaded: withheld" in index
    assert f"<td>{rejected_first}</td><td>loan_status</td>" in index
    with (reports / "quarantine.csv").open(newline="") as handle:
        quarantined = list(csv.DictReader(handle))
    assert [(q["scope"], q["field"]) for q in quarantined] == [
        (rejected_first, "currentDelinquencyStatus")
    ]

    # 1. a restatement of a closed period: a new version, with what changed, the old one kept
    restated = periods[2]
    set_delinquency(deliveries(inputs) / restated / "loan_status.csv", 45)
    third = run_here(env, "--period", restated)
    assert third.returncode == 0, third.stderr[-3000:]
    date = distribution_date(tmp_path, restated)
    versions = dict(
        query(
            tmp_path / "warehouse.duckdb",
            "select distribution_date, max(version) from history.certificate_versions group by 1",
        )
    )
    assert versions[date] == 2 and sum(v for v in versions.values()) == PERIODS - 2 + 1
    page = (reports / "certificates" / f"certificate_{date}.html").read_text()
    assert "restated" in page and "78a_count" in page
    assert (reports / "certificates" / "versions" / f"certificate_{date}_v1.pdf").exists()
    superseded = query(
        tmp_path / "warehouse.duckdb",
        "select count(*) from raw.deliveries where scope = ? and status = 'superseded'",
        [restated],
    )
    assert superseded == [(1,)]  # the earlier delivery stays, with its hash and load time
    # (its periods are compared with a build from scratch after step 2)

    # 2. a restatement whose balances do not follow the Simple Interest Method (a payment the
    # servicer's balances do not reflect): withheld from that period on, the last published
    # versions stand, the run says why
    bad = periods[5]
    shift_a_payment(deliveries(inputs) / bad / "payment_transactions.csv", "0.50")
    fourth = run_here(env, "--period", bad)
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    status = gate(tmp_path)
    assert [status[p] for p in periods] == [True] * 5 + [False] * (PERIODS - 5)
    assert "WITHHELD" in fourth.stderr and "1122(d)(4)(v)" in fourth.stderr
    date = distribution_date(tmp_path, bad)
    page = (reports / "certificates" / f"certificate_{date}.html").read_text()
    assert "Withheld" in page and "version 1" in page
    assert (reports / "certificates" / "versions" / f"certificate_{date}_v1.html").exists()
    versions = dict(
        query(
            tmp_path / "warehouse.duckdb",
            "select distribution_date, max(version) from history.certificate_versions group by 1",
        )
    )
    assert versions[date] == 1  # nothing withheld becomes a version
    assert differences_from_a_full_build(work, tmp_path / "scratch") == {}

    # 3. a restatement that cannot be read: rejected, named with its file, row and field, and
    # recorded in the published warehouse; the delivery loaded before stands, so does every
    # certificate
    before = query(
        tmp_path / "warehouse.duckdb", "select * from quality.certificate_gate order by all"
    )
    broken = deliveries(inputs) / periods[7] / "loan_status.csv"
    broken.write_bytes(broken.read_bytes()[: broken.stat().st_size // 2])
    fifth = run_here(env, "--period", periods[7])
    printed = fifth.stdout + fifth.stderr
    assert fifth.returncode == 3, printed[-3000:]  # published, with a rejected delivery
    assert "rejected" in printed and str(broken) in printed and "row " in printed
    rejected = query(
        tmp_path / "warehouse.duckdb",
        "select scope, status from raw.deliveries where status = 'rejected' order by scope",
    )
    assert rejected == [(periods[7], "rejected"), (rejected_first, "rejected")]
    index = (reports / "index.html").read_text()  # what the operator reads
    assert f"<td>{periods[7]}</td><td>loan_status</td><td>{broken}</td>" in index
    assert "the delivery loaded before stands" in index
    assert (tmp_path / "reports" / "index.html").read_text().count('class="withheld" href') == 1
    assert [
        g[:4]
        for g in query(
            tmp_path / "warehouse.duckdb", "select * from quality.certificate_gate order by all"
        )
    ] == [g[:4] for g in before]


def test_a_first_run_without_the_first_period_withholds_everything_and_says_why(inputs, tmp_path):
    shutil.copytree(DEFAULT_DEALS_DIR, tmp_path / "deals")  # the shelf beside the inputs
    env = pipeline_env(inputs, tmp_path)
    later = delivered(inputs)[3]
    result = run_here(env, "--period", later)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"no tape delivered for {delivered(inputs)[0]}" in result.stderr
    assert query(
        tmp_path / "warehouse.duckdb",
        "select bool_or(is_publishable) from quality.certificate_gate",
    ) == [(False,)]
    performance = tmp_path / "reports" / DEAL_ID / "performance.html"
    assert "none computed yet" in performance.read_text()

    # the Receivable Schedule re-delivered with one receivable changed: every computed period
    # depends on it, so a monthly run leaves it for the full rebuild, withholds the trust's
    # certificates and says why and how to load it (status 3: the other trusts would publish)
    schedule = inputs / DEAL_ID / "receivable_schedule.csv"
    lines = schedule.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[9] = f"{Decimal(cells[9]) + 1:.2f}"  # scheduled_payment
    schedule.write_text(lines[0] + ",".join(cells) + "".join(lines[2:]))
    # and its deal file changed (a Note Rate): not applied, the trust held for it too
    deal_file = tmp_path / "deals" / DEFAULT_DEAL_FILE.name
    deal_file.write_text(deal_file.read_text().replace('rate: "0.0109"', 'rate: "0.0119"', 1))
    loaded = query(tmp_path / "warehouse.duckdb", "select * from raw.receivable_schedule")
    again = run_here(env, "--period", later)
    printed = again.stdout + again.stderr
    assert again.returncode == 3, printed[-3000:]
    assert f"{DEAL_ID}: certificates withheld, its Receivable Schedule" in printed
    assert f"Receivable Schedules held: {DEAL_ID}" in printed
    assert "differs from the one loaded" in printed
    assert "python -m dagster_project.pipeline --rebuild" in printed
    assert query(tmp_path / "warehouse.duckdb", "select * from raw.receivable_schedule") == loaded
    reasons = query(
        tmp_path / "warehouse.duckdb",
        "select distinct withheld_reason from quality.certificate_gate",
    )
    assert len(reasons) == 1 and "differs from the one loaded" in reasons[0][0], reasons
    assert "the trust's deal file" in reasons[0][0] and "class A-2a changed" in reasons[0][0]
    assert f"deal files HELD: {DEAL_ID}" in printed and "--accept-deal-changes" in printed
    rate = "select rate from raw.deal_classes where deal_id = ? and class_id = 'A-2a'"
    assert query(tmp_path / "warehouse.duckdb", rate, [DEAL_ID]) == [(Decimal("0.0109"),)]
    # (a schedule re-delivered that would be rejected, and the same file as loaded lifting the
    # hold: tests/test_ingestion.py)
