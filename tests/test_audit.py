"""The auditor's package: the seeded sample, the tie-outs, the exceptions' lifecycle, the aging of
reconciling items and the manifest."""

import datetime as dt
import json
import shutil
import zipfile
from decimal import Decimal
from fractions import Fraction

import duckdb
import pytest
from conftest import DEAL_ID, copied_warehouse
from scenarios import TAPE_DEFAULTS, loader

from dagster_project.audit import exceptions
from dagster_project.audit.package import SamplePlan, verify, write_package
from dagster_project.audit.sampling import sample_listing, sample_size, select
from dagster_project.business_calendar import payment_periods
from dagster_project.deal import load_deal
from dagster_project.ingestion import schemas
from dagster_project.ingestion.loader import IngestionError, ensure_table
from dagster_project.ingestion.loads import load_once_delivered
from dagster_project.quality import store
from dagster_project.warehouse import share_file, share_tree

DEAL = load_deal()
PERIODS = payment_periods(DEAL)[:6]


def test_the_sample_size_follows_confidence_and_error_rates():
    # no expected error: 59 for 95% and 5% (the attribute-sampling tables' figure)
    assert sample_size(Fraction(95, 100), Fraction(5, 100), Fraction(0)) == 59
    assert sample_size(Fraction(95, 100), Fraction(5, 100), Fraction(25, 1000)) == 234
    assert sample_size(Fraction(90, 100), Fraction(10, 100), Fraction(0)) == 22
    with pytest.raises(ValueError):
        sample_size(Fraction(95, 100), Fraction(5, 100), Fraction(6, 100))


def test_the_same_seed_gives_the_same_sample_and_another_seed_another():
    ids = [f"R{i:05d}" for i in range(5000)]
    first = select(ids, 234, seed=7)
    assert first == select(list(reversed(ids)), 234, seed=7)  # the order given does not matter
    assert len(set(first)) == 234
    assert select(ids, 234, seed=8) != first
    assert select(ids[:10], 234, seed=7) == select(ids[:10], 234, seed=7)  # a pool smaller than n


@pytest.fixture(scope="module")
def published(built_warehouse, tmp_path_factory):
    paths = copied_warehouse(built_warehouse, tmp_path_factory.mktemp("audit"))
    return paths["published"]


def test_the_sample_lists_every_tested_attribute_of_each_drawn_receivable(published):
    con = duckdb.connect(str(published), read_only=True)
    rows = sample_listing(con, DEAL, 59, seed=11)
    again = sample_listing(con, DEAL, 59, seed=11)
    con.close()
    assert rows == again
    receivables = {r["receivable_id"] for r in rows}
    assert len(receivables) == 59
    attributes = {r["attribute"] for r in rows}
    for wanted in ("principal_balance_cents", "apr_millionths", "original_term",
                   "remaining_term", "origination_date", "maturity_difference_months",
                   "payment_difference_cents", "obligor_state", "days_past_due"):  # fmt: skip
        assert wanted in attributes, wanted
    assert {r["result"] for r in rows} <= {"agrees", "exception"}
    assert all(r["tolerance"] for r in rows)


def test_every_tieout_holds_and_a_corrupted_figure_fails_its_own(published, tmp_path):
    copy = tmp_path / "w.duckdb"
    shutil.copyfile(published, copy)
    con = duckdb.connect(str(copy))
    kinds = con.execute(
        "select tieout, count(*), bool_and(is_tied_out) from marts.rpt_certificate_tieouts "
        "where deal_id = ? group by 1 order by 1",
        [DEAL_ID],
    ).fetchall()
    assert {k for k, _n, _ok in kinds} == {
        "class balances", "notes and overcollateralization", "pool factors",
        "pool roll-forward", "reserve account roll-forward", "sources equal uses",
        "statement repeats the certificate",
    }  # fmt: skip
    assert all(ok for _k, _n, ok in kinds)
    date = PERIODS[2].distribution_date
    con.execute(
        "update marts.fct_distribution_date set reserve_account_ending_balance = "
        "reserve_account_ending_balance + 0.01 where deal_id = ? and distribution_date = ?",
        [DEAL_ID, date],
    )
    failed = con.execute(
        "select distribution_date, tieout, difference_amount from marts.rpt_certificate_tieouts "
        "where not is_tied_out"
    ).fetchall()
    con.close()
    assert failed == [(date, "reserve account roll-forward", Decimal("0.01"))]


def test_a_breach_goes_open_then_repurchased_and_the_package_verifies(published, tmp_path):
    con = duckdb.connect(str(published), read_only=True)
    deal_id, exception_id = con.execute(
        "select deal_id, exception_id from quality.audit_exceptions "
        "where kind = 'Section 2.3 breach' and status = 'repurchased' order by all limit 1"
    ).fetchone()
    events = exceptions.history(con, deal_id, exception_id)
    assert [status for _on, status, _detail in events] == ["open", "repurchased"]
    assert events[0][0] == DEAL.closing_date and "Purchase Amount $" in events[1][2]
    period = PERIODS[3].collection_period
    docs = tmp_path / "published_data_docs"
    (docs / "validations").mkdir(parents=True)
    (docs / "index.html").write_text("<html>the published build's validations</html>")
    (docs / "validations" / "run.html").write_text("<html>results</html>")
    plan = SamplePlan(count=25, seed=3)
    counts = write_package(con, DEAL, period, tmp_path / period, plan, docs)
    con.close()
    assert counts["sampled_receivables"] == 25 and counts["tieouts_failed"] == 0
    folder = tmp_path / period
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted([
        "aging.csv", "criteria.csv", "data_docs", "exception_history.csv", "exceptions.csv",
        "index.html", "manifest.json", "package.pdf", "sample.csv", "tieouts.csv",
    ])  # fmt: skip
    manifest = json.loads((folder / "manifest.json").read_text())
    assert "data_docs/validations/run.html" in manifest["files"]
    kinds = {d["file_kind"] for d in manifest["deliveries"]}
    assert kinds >= {"receivable_schedule", "loan_status"}
    with zipfile.ZipFile(tmp_path / f"{period}.zip") as archive:
        assert f"{period}/data_docs/index.html" in archive.namelist()
        assert f"{period}/manifest.json" in archive.namelist()
    assert verify(folder) == []
    (folder / "tieouts.csv").write_text("tampered\n")
    assert verify(folder) == ["tieouts.csv"]


def test_a_package_written_again_leaves_the_published_one_it_shares_files_with(published, tmp_path):
    """A publication shares the earlier publication's packages (hard links, share_tree); writing
    the same period's package again replaces files, it never rewrites the published ones."""
    con = duckdb.connect(str(published), read_only=True)
    period = PERIODS[3].collection_period
    before, after = tmp_path / "published", tmp_path / "building"
    write_package(con, DEAL, period, before / period, SamplePlan(count=25, seed=3))
    files = {p: p.read_bytes() for p in before.rglob("*") if p.is_file()}
    share_tree(before, after)
    write_package(con, DEAL, period, after / period, SamplePlan(count=10, seed=4))
    con.close()
    assert {p: p.read_bytes() for p in before.rglob("*") if p.is_file()} == files
    assert (after / f"{period}.zip").read_bytes() != files[before / f"{period}.zip"]
    assert (after / period / "sample.csv").read_bytes() != files[before / period / "sample.csv"]


def test_a_decisions_file_is_validated_like_any_input(tmp_path):
    trust = tmp_path / DEAL_ID
    trust.mkdir()
    (trust / "exception_decisions.csv").write_text(
        "exception_id,decision,decided_on,decided_by,reason\n"
        "2.3(q):principal_balance_cents:1,approved,2016-01-05,J. Smith,small\n"
    )
    con = duckdb.connect()
    report = load_once_delivered(con, tmp_path, [DEAL], schemas.EXCEPTION_DECISIONS)
    (error,) = report.rejected
    assert isinstance(error, IngestionError)
    (finding,) = error.findings
    assert (finding.row, finding.field, finding.value) == (1, "decision", "approved")
    shutil.rmtree(trust)
    trust.mkdir()  # a trust that delivers no decisions: nothing loaded, nothing rejected
    report = load_once_delivered(con, tmp_path, [DEAL], schemas.EXCEPTION_DECISIONS)
    assert report.rejected == [] and report.not_delivered == [(DEAL_ID, "exception_decisions")]


def _tape(rid, period, begin, end):
    return {
        **TAPE_DEFAULTS,
        "assetNumber": rid,
        "reportingPeriodBeginningDate": str(period.collection_period_start),
        "reportingPeriodEndingDate": str(period.collection_period_end),
        "reportingPeriodBeginningLoanBalanceAmount": begin,
        "reportingPeriodActualEndBalanceAmount": end,
    }


def test_a_balance_difference_ages_past_90_days_is_cured_and_another_is_waived(model_runner):
    """Hand-worked: A ($10,000.00, no payments) is reported $5.00 too high at the end of periods
    1-4 and 6, right at the end of period 5. Reconciling items: its ending balance from period 1,
    resolved by period 5 (121 days: late though resolved); its beginning balance from period 2
    (the tape carries the wrong end forward), resolved by period 6 (122 days); its ending balance
    of period 6, open (0 days). The open one is then waived by the servicer."""
    schedule = [{"receivable_id": "A", "apr": "0.050000", "principal_balance": "10000.00",
                 "last_payment_date": "2015-09-30", "original_term": "60"}]  # fmt: skip
    off = [True, True, True, True, False, True]
    periods, begin = [], "10000.00"
    for period, wrong in zip(PERIODS, off, strict=True):
        end = "10005.00" if wrong else "10000.00"
        periods.append((period.collection_period, [_tape("A", period, begin, end)], []))
        begin = end
    con = model_runner.run(
        loader(schedule, periods),
        up_to=("rpt_reconciliation_aging", "fct_eligibility_exception", "fct_repurchase"),
    )  # what the register reads
    items = con.execute(
        "select figure, first_collection_period, resolved_collection_period, age_days, "
        "is_resolved, is_resolved_within_90_days, is_late from marts.rpt_reconciliation_aging "
        "order by figure, first_collection_period"
    ).fetchall()
    p1, p2, p5, p6 = PERIODS[0], PERIODS[1], PERIODS[4], PERIODS[5]
    assert (p5.collection_period_end - p1.collection_period_end).days == 121
    assert (p6.collection_period_end - p2.collection_period_end).days == 122
    assert items == [
        ("beginning_balance", p2.collection_period, p6.collection_period, 122, True, False, True),
        ("ending_balance", p1.collection_period, p5.collection_period, 121, True, False, True),
        ("ending_balance", p6.collection_period, None, 0, False, False, False),
    ]
    store.ensure_schema(con)
    today = dt.date(2016, 5, 1)
    now = dt.datetime(2016, 5, 1, tzinfo=dt.UTC)
    exceptions.record(con, "servicing_criteria", today, now)
    cured = f"1122(d)(4)(v):ending_balance:A:{p1.collection_period}"
    waived = f"1122(d)(4)(v):ending_balance:A:{p6.collection_period}"
    assert [e[1] for e in exceptions.history(con, DEAL_ID, cured)] == ["open", "cured"]
    assert exceptions.history(con, DEAL_ID, cured)[1][0] == p5.collection_period_end
    assert [e[1] for e in exceptions.history(con, DEAL_ID, waived)] == ["open"]
    decisions = schemas.EXCEPTION_DECISIONS
    ensure_table(con, decisions)  # as ingestion creates it (loading is tested above)
    con.execute(
        f"insert into {decisions.table} (deal_id, delivery_id, exception_id, decision, "
        "decided_on, decided_by, reason) values (?, 'd1', ?, 'waived', ?, "
        "'J. Smith, Controller', 'below the de minimis $100 tolerance of the procedures')",
        [DEAL_ID, waived, dt.date(2016, 5, 2)],
    )
    added = exceptions.record(con, "servicing_criteria", dt.date(2016, 5, 3), now)
    assert added == 1 and exceptions.record(con, "servicing_criteria", today, now) == 0
    status = con.execute(
        "select status, status_on, status_detail from quality.audit_exceptions "
        "where exception_id = ?",
        [waived],
    ).fetchone()
    assert status[:2] == ("waived", dt.date(2016, 5, 2)) and "J. Smith" in status[2]
    con.close()


def test_sharing_a_file_over_a_shared_one_replaces_it_and_leaves_the_other_copy(tmp_path):
    """share_file never writes into the file the target was: a hard link of a published file,
    shared again from another source, stays the published file's content."""
    published, building = tmp_path / "published.pdf", tmp_path / "building.pdf"
    published.write_bytes(b"published")
    share_file(published, building)  # the building folder's file is the published one
    newer = tmp_path / "newer.pdf"
    newer.write_bytes(b"a newer rendering")
    share_file(newer, building)
    assert published.read_bytes() == b"published"
    assert building.read_bytes() == b"a newer rendering"
    assert not list(tmp_path.glob("*.sharing"))
