"""Section 2.3 suites, the breach register, the 2.4 repurchase and the certificate gate."""

import csv
import datetime as dt
import json
import shutil
from decimal import Decimal

import duckdb
import numpy as np
import pypdfium2 as pdfium
import pytest
from conftest import DEAL_ID, deliveries
from reference.repurchase import purchase_amount, repurchase_distribution_date

from dagster_project.audit import exceptions
from dagster_project.business_calendar import payment_periods
from dagster_project.deal import load_deal
from dagster_project.generator.arrays import level_payment_cents
from dagster_project.generator.schedule import build_schedule
from dagster_project.generator.writers import write_schedule
from dagster_project.ingestion import schemas
from dagster_project.ingestion.loader import load_files
from dagster_project.quality import store
from dagster_project.quality.runs import (
    SERVICING_SUITE,
    schedule_validated,
    trust_holds,
    validate_schedule,
    validate_servicing,
)
from dagster_project.quality.suites import schedule_receivable_suite
from dagster_project.reports.auditor import load_catalog
from dagster_project.reports.writer import write_reports

DEAL = load_deal()
PERIODS = payment_periods(DEAL)


@pytest.fixture(scope="module")
def published(built_warehouse):
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    yield con
    con.close()


def test_suites_find_exactly_the_breaches_the_generator_planted(published, small_deal):
    manifest = json.loads(
        (small_deal / DEAL_ID / "ground_truth" / "breach_manifest.json").read_text()
    )
    planted = {(b["receivable_id"], b["representation"]) for b in manifest}
    found = set(
        published.execute(
            "select receivable_id, representation from marts.fct_eligibility_exception"
        ).fetchall()
    )
    assert len(planted) == 39
    assert found == planted


def test_breaches_are_repurchased_on_the_right_date_for_the_purchase_amount(published, small_deal):
    schedule = {
        row["receivable_id"]: row
        for row in csv.DictReader((small_deal / DEAL_ID / "receivable_schedule.csv").open())
    }
    due = repurchase_distribution_date(DEAL.closing_date, DEAL.repurchase_cure_days, PERIODS)
    assert due == dt.date(2015, 12, 15)  # 2015-10-28 + 30 days falls in November's period
    rows = published.execute(
        "select receivable_id, repurchase_status, distribution_date, purchase_principal_amount, "
        "purchase_finance_charge_amount, reported_purchase_amount from marts.fct_repurchase"
    ).fetchall()
    assert len(rows) == 39
    repurchased = [r for r in rows if r[1] == "repurchased"]
    assert len(repurchased) >= 30
    last_period = next(p for p in PERIODS if p.distribution_date == due)
    for receivable_id, status, date, principal, finance, reported in rows:
        assert status in ("repurchased", "paid_off_before_due", "defaulted_before_due")
        assert date == due
        if status != "repurchased":
            continue
        transactions = []
        for period in PERIODS:
            if period.collection_period_start > last_period.collection_period_end:
                break
            folder = deliveries(small_deal) / period.collection_period
            for t in csv.DictReader((folder / "payment_transactions.csv").open()):
                if t["assetNumber"] == receivable_id and t["transactionType"] in (
                    "payment",
                    "rebate",
                    "late_fee",
                ):
                    transactions.append(
                        (
                            dt.date.fromisoformat(t["transactionDate"]),
                            t["transactionType"],
                            Decimal(t["transactionAmount"]),
                        )
                    )
        expected = purchase_amount(schedule[receivable_id], transactions, due)
        assert (principal, finance) == expected, receivable_id
        assert reported == principal + finance
    # the repurchases flow into that Distribution Date's certificate (lines 3, 17c, 18c)
    lines = dict(
        published.execute(
            "select line, amount from marts.rpt_servicer_certificate "
            "where distribution_date = ? and line in ('3', '17c', '18c')",
            [due],
        ).fetchall()
    )
    assert lines["3"] == lines["18c"] == sum(r[3] for r in repurchased)
    assert lines["17c"] == sum(r[4] for r in repurchased)
    assert lines["3"] > 0


def test_auditor_report_lists_every_representation_tested_or_not_testable(built_warehouse):
    auditor = built_warehouse["reports"] / DEAL_ID / "auditor"
    report = (auditor / "index.html").read_text()
    catalog = load_catalog()
    for entry in catalog["representations"] + catalog["servicing_criteria"]:
        assert f"<td>{entry.id}</td>" in report, entry.id
        if not entry.tested_by:
            assert entry.reason, entry.id
    assert "NOT TESTED" not in report  # every tested_by entry has expectations carrying its id
    assert report.count("not testable from data") == sum(
        1 for e in catalog["representations"] + catalog["servicing_criteria"] if not e.tested_by
    )
    assert "<svg " in report and "Receivables breaching each representation" in report
    pdf = pdfium.PdfDocument(str(auditor / "auditor_report.pdf"))
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    pdf.close()
    assert "2.3(q)" in text and "1122(d)(4)(v)" in text and "not testable from data" in text
    with (auditor / "exceptions.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 39
    docs = built_warehouse["gx"] / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"
    assert docs.exists()


# --- a schedule with one breach of each kind ------------------------------------------------


@pytest.fixture(scope="module")
def clean_schedule(tmp_path_factory):
    """Receivables of a generated pool that breach nothing (the planted ones removed)."""
    schedule = build_schedule(DEAL, 400, np.random.default_rng(11))
    planted = {b["row"] for b in schedule.breaches}
    frame = schedule.frame.drop(index=list(planted)).reset_index(drop=True)
    path = tmp_path_factory.mktemp("schedule") / "receivable_schedule.csv"
    write_schedule(frame, path)
    return path


def _load(path):
    con = duckdb.connect(":memory:")
    load_files(con, DEAL_ID, "receivable_schedule", [(schemas.RECEIVABLE_SCHEDULE, path)])
    return con


def _consistent_payment(con, receivable_id):
    """Re-price the scheduled payment and maturity for the row's (breaching) terms."""
    amount, apr, term, first = con.execute(
        "select amount_financed, apr, original_term, first_payment_date "
        "from raw.receivable_schedule where receivable_id = ?",
        [receivable_id],
    ).fetchone()
    pay = level_payment_cents(
        np.array([int(amount * 100)]), np.array([int(apr * 1_000_000)]), np.array([term])
    )[0]
    con.execute(
        "update raw.receivable_schedule set scheduled_payment = ?::decimal(18, 2) / 100, "
        "maturity_date = ?::date + to_months(original_term - 1) where receivable_id = ?",
        [int(pay), first, receivable_id],
    )


BREACHES = {  # expectation name -> the update that breaches it (on one receivable each)
    "ExpectColumnValuesToBeBetween(payment_difference_cents)": "scheduled_payment = "
    "scheduled_payment + 10",
    "ExpectColumnValuesToBeInSet(is_repossessed)": "is_repossessed = true",
    "ExpectColumnValuesToBeInSet(interest_calculation_method)": "interest_calculation_method = "
    "'precomputed'",
    "ExpectColumnValuesToBeBetween(payments_made)": "payments_made = 0",
    "ExpectColumnValuesToBeInSet(obligor_state)": "obligor_state = 'PR'",
    "ExpectColumnValuesToBeInSet(is_government_obligor)": "is_government_obligor = true",
    "ExpectColumnValuesToBeBetween(days_past_due)": "days_past_due = 31",
    "ExpectColumnValuesToBeBetween(principal_balance_cents)": "principal_balance = 499.99",
    "ExpectColumnValuesToBeInSet(is_bankrupt)": "is_bankrupt = true",
    "ExpectColumnValuesToBeBetween(origination_date)": "origination_date = date '2009-07-26'",
    "ExpectColumnValuesToBeBetween(original_term)": "original_term = 84",
    "ExpectColumnValuesToBeBetween(remaining_term)": "remaining_term = 2",
    "ExpectColumnValuesToBeBetween(apr_millionths)": "apr = 0.250001",
    "ExpectColumnValuesToBeBetween(maturity_difference_months)": "maturity_date = "
    "maturity_date + to_months(1)",
    "ExpectColumnValuesToBeBetween(balance_over_amount_financed_cents)": "principal_balance = "
    "amount_financed + 0.01",
    "ExpectColumnValuesToNotBeNull(origination_date)": "origination_date = null",
}
REPRICED = {  # the payment and maturity follow the breaching terms (one breach each)
    "ExpectColumnValuesToBeBetween(original_term)",
    "ExpectColumnValuesToBeBetween(apr_millionths)",
}


def test_each_kind_of_breach_fails_its_named_expectation_for_exactly_that_receivable(
    clean_schedule, tmp_path
):
    con = _load(clean_schedule)
    ids = [
        r[0]
        for r in con.execute(
            "select receivable_id from raw.receivable_schedule order by 1"
        ).fetchall()
    ]
    expected = {}
    for (name, update), receivable_id in zip(BREACHES.items(), ids, strict=False):
        con.execute(
            f"update raw.receivable_schedule set {update} where receivable_id = ?", [receivable_id]
        )
        if name in REPRICED:
            _consistent_payment(con, receivable_id)
        expected[name] = {receivable_id}
    # a contract listed twice (the loader refuses duplicates; this schedule came another way)
    duplicate = ids[len(BREACHES)]
    con.execute(
        "insert into raw.receivable_schedule select * from raw.receivable_schedule "
        "where receivable_id = ?",
        [duplicate],
    )
    expected["ExpectColumnValuesToBeUnique(receivable_id)"] = {duplicate}

    outcomes = validate_schedule(con, DEAL, tmp_path / "gx")
    receivable_rules = {r.name for r in schedule_receivable_suite(DEAL).rules}
    assert set(expected) <= receivable_rules
    for outcome in outcomes:
        if outcome.suite.name != f"{DEAL_ID}.receivable_schedule_receivables":
            continue
        failing = {receivable_id for receivable_id, _ in outcome.offenders}
        assert failing == expected.get(outcome.rule.name, set()), outcome.rule.name
        assert outcome.success == (outcome.rule.name not in expected)
    register = con.execute(
        "select representation, count(distinct receivable_id) from quality.eligibility_exceptions "
        "group by 1"
    ).fetchall()
    assert dict(register)["2.3(u)"] == 2  # original and remaining term: two receivables
    observed = con.execute(
        "select observed_value from quality.eligibility_exceptions where representation = '2.3(w)'"
    ).fetchone()[0]
    assert observed == "25.0001%"


def test_pool_level_representations_and_the_cutoff_balance(clean_schedule, tmp_path):
    con = _load(clean_schedule)
    outcomes = {o.rule.name: o for o in validate_schedule(con, DEAL, tmp_path / "gx")}
    # the sample of 360-odd clean receivables is not the deal's pool: its balance differs
    balance = outcomes["ExpectColumnValuesToBeBetween(cutoff_pool_balance_cents)"]
    assert not balance.success and balance.rule.blocking
    (failure,) = trust_holds(con)[DEAL_ID]
    assert "equals the deal file's $1,050,000,018.44" in failure
    # every vehicle new: 2.3(s) fails both ways; the weighted remaining term moves with the terms
    con.execute("update raw.receivable_schedule set vehicle_new_used = 'new'")
    con.execute("update raw.receivable_schedule set remaining_term = 12")
    outcomes = {o.rule.name: o for o in validate_schedule(con, DEAL, tmp_path / "gx")}
    for name in ("new_vehicle_share", "used_vehicle_share", "weighted_average_remaining_term"):
        outcome = outcomes[f"ExpectColumnValuesToBeBetween({name})"]
        assert not outcome.success and not outcome.rule.blocking, name


def test_a_schedule_that_is_not_the_deals_withholds_that_trust_only():
    """A blocking failure of a trust's schedule suites withholds every certificate of that trust;
    the other trusts of the shelf are untouched."""
    periods = [
        store.PeriodStatus(deal, period, dt.date(2016, month, 15), True, False, None)
        for deal in ("caot-2014-4", DEAL_ID)
        for month, period in ((1, "2015-12"), (2, "2016-01"))
    ]
    why = "the Receivable Schedule failed: Cutoff Pool Balance differs"  # runs.trust_holds
    gate = store.certificate_gate(periods, {}, {DEAL_ID: [why]})
    assert [(g.deal_id, g.is_publishable) for g in gate] == [
        ("caot-2014-4", True), ("caot-2014-4", True), (DEAL_ID, False), (DEAL_ID, False),
    ]  # fmt: skip
    assert gate[2].withheld_reason == gate[3].withheld_reason == why


def test_a_failing_period_withholds_its_certificate_and_every_later_one(built_warehouse, tmp_path):
    copy = tmp_path / "warehouse.duckdb"
    shutil.copyfile(built_warehouse["published"], copy)
    con = duckdb.connect(str(copy))
    periods = [
        r[0]
        for r in con.execute(
            "select collection_period from marts.rpt_servicing_criteria where deal_id = ? "
            "order by 1",
            [DEAL_ID],
        ).fetchall()
    ]
    bad = periods[5]
    con.execute(
        "update marts.rpt_servicing_criteria set balance_mismatch_count = 2 "
        "where deal_id = ? and collection_period = ?",
        [DEAL_ID, bad],
    )
    outcomes, gate = validate_servicing(con, tmp_path / "gx")
    # the auditor's register opens an exception for the failing period (audit/exceptions.py)
    now = dt.datetime.now(dt.UTC)
    exceptions.record(con, SERVICING_SUITE, now.date(), now)
    register = con.execute(
        "select exception_id, kind, collection_period, value_found, status from "
        "quality.audit_exceptions where kind = 'servicing criterion'"
    ).fetchall()
    con.close()
    assert register == [
        (f"1122(d)(4)(v):balance_mismatch_count:{bad}", "servicing criterion", bad, "2", "open")
    ]
    failed = {o.rule.representation: o for o in outcomes if not o.success}
    assert set(failed) == {"1122(d)(4)(v)"}
    assert failed["1122(d)(4)(v)"].offenders == ((f"{DEAL_ID}/{bad}", "2"),)
    gate = [row for row in gate if row.deal_id == DEAL_ID]
    assert [row.is_publishable for row in gate] == [p < bad for p in periods]
    assert "1122(d)(4)(v)" in gate[5].withheld_reason
    assert bad in gate[6].withheld_reason
    counts = write_reports(copy, tmp_path / "reports")
    assert counts["certificates_withheld"] == len(periods) - 5
    page = (
        tmp_path
        / "reports"
        / DEAL_ID
        / "certificates"
        / f"certificate_{gate[5].distribution_date}.html"
    )
    assert "Withheld" in page.read_text() and "$" not in page.read_text()


def test_frames_are_made_comparable_without_changing_a_value():
    """Great Expectations compares int64 and datetime64[ns] columns with numpy, other dtypes one
    value at a time; the frame handed to it keeps every value (and the caller's frame its
    dtypes). A date beyond the nanosecond range stays as it is."""
    import pandas as pd

    from dagster_project.quality.validation import comparable

    frame = duckdb.sql(
        "select 7::integer as term, 2::bigint as cents, 1.5::double as rate, 'R1' as id, "
        "date '2015-04-01' as origination_date, date '9999-12-31' as far_date"
    ).df()
    frame["missing"] = pd.array([None], dtype="Int32")  # a nullable column stays as it is
    out = comparable(frame)
    assert out["missing"].dtype == frame["missing"].dtype
    assert out["term"].dtype == np.int64 and out["cents"].dtype == np.int64
    assert out["origination_date"].dtype == np.dtype("datetime64[ns]")
    assert out["far_date"].dtype == frame["far_date"].dtype  # beyond 2262
    assert frame["term"].dtype == np.int32  # the caller's frame is untouched
    for column in frame.columns.drop("missing"):
        assert [pd.Timestamp(v) if column.endswith("date") else v for v in out[column]] == [
            pd.Timestamp(v) if column.endswith("date") else v for v in frame[column]
        ]


# --- when the suites run -------------------------------------------------------------------


def test_the_suites_run_again_only_when_another_schedule_is_loaded(clean_schedule, tmp_path):
    con = _load(clean_schedule)
    assert not schedule_validated(con, DEAL)  # never validated
    validate_schedule(con, DEAL, tmp_path / "gx")
    assert schedule_validated(con, DEAL)
    # another schedule (one receivable fewer) is loaded: its results are still to come
    restated = tmp_path / "restated" / "receivable_schedule.csv"
    restated.parent.mkdir()
    lines = clean_schedule.read_text().splitlines(keepends=True)
    restated.write_text("".join(lines[:-1]))
    load_files(con, DEAL_ID, "receivable_schedule", [(schemas.RECEIVABLE_SCHEDULE, restated)])
    assert not schedule_validated(con, DEAL)
