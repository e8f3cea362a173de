"""The shelf: two trusts of different structures in one warehouse, one of them with bad deliveries.

2015-4 (eight classes, a LIBOR floater) and 2012-3 (seven classes, no floater), a year of each.
2012-3's eighth delivery lacks the payment of a receivable that pays off the month after and then
leaves the tapes with a balance the recomputation still carries (the Pool Balance no longer rolls
forward), and carries another receivable's payment beyond its payoff (not applied: the obligor's),
and its last tape is unreadable: its certificates from the eighth month on are withheld,
every other certificate of both trusts is published, each equal to what the trust gives alone
(2015-4: the single-trust build, line for line; 2012-3: the plain-Python references from its
files)."""

import csv
import shutil
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest
from conftest import FIRST_YEAR, deliveries, once_per_session, run_pipeline, warehouse_paths
from reference.from_files import certificate_from_files

from dagster_project.business_calendar import payment_periods
from dagster_project.certificate_layout import certificate_layout
from dagster_project.deal import load_deal
from dagster_project.generator.__main__ import generate_shelf
from dagster_project.generator.market_inputs import tangible_net_worth_frame
from dagster_project.generator.writers import write_frame

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = load_deal(ROOT / "data" / "deals" / "caot_2015_4.yaml")
OTHER = load_deal(ROOT / "data" / "deals" / "caot_2012_3.yaml")
BAD = 8  # 2012-3: the period whose transactions lack a payment, withheld from then on
UNREADABLE = FIRST_YEAR  # 2012-3: the period whose tape is unreadable


def _first_year(source: Path, target: Path) -> None:
    for period in sorted(p.name for p in source.iterdir())[:FIRST_YEAR]:
        shutil.copytree(source / period, target / period)


@pytest.fixture(scope="module")
def shelf(small_deal, tmp_path_factory) -> dict:
    """Built once for the session (both workers read it)."""
    folder = once_per_session(tmp_path_factory, "shelf", lambda f: _build(small_deal, f))
    paths = warehouse_paths(folder / "inputs", folder / "run")
    return {
        "paths": paths,
        "code": int((folder / "exit_code").read_text()),
        "reference_inputs": folder / "reference",
    }


def _build(small_deal: Path, folder: Path) -> None:
    inputs = folder / "inputs"
    shutil.copytree(small_deal, inputs, ignore=shutil.ignore_patterns("deliveries"))
    _first_year(deliveries(small_deal), deliveries(inputs))
    generated = folder / "generated"
    last = payment_periods(OTHER)[FIRST_YEAR - 1].collection_period
    # $1 billion over 2,000 receivables: each under the absurd-amount bound of ingestion
    generate_shelf(generated, [OTHER], receivables=2000, seed=7, progress=False, as_of=last)
    shutil.copytree(generated / OTHER.deal_id, inputs / OTHER.deal_id)
    # the servicer's net worth for both trusts' quarters (the same series, TNW_ANCHOR)
    write_frame(
        tangible_net_worth_frame(
            payment_periods(OTHER)[0].distribution_date,
            payment_periods(SAMPLE)[FIRST_YEAR].distribution_date,
        ),
        inputs / "tangible_net_worth.csv",
        (),
    )
    reference_inputs = folder / "reference"  # 2012-3's periods before the bad one
    shutil.copytree(generated, reference_inputs, ignore=shutil.ignore_patterns("deliveries"))
    for period in payment_periods(OTHER)[: BAD - 1]:
        shutil.copytree(
            deliveries(generated, OTHER.deal_id) / period.collection_period,
            deliveries(reference_inputs, OTHER.deal_id) / period.collection_period,
        )
    _drop_a_payment_before_a_payoff(deliveries(inputs, OTHER.deal_id), BAD)
    _overpay_a_receivable(deliveries(inputs, OTHER.deal_id), BAD)
    # the market inputs of one later date missing: its trust account earnings (counted), its
    # index rate (2012-3 has no floating class: not needed)
    date = str(payment_periods(OTHER)[BAD].distribution_date)
    for name in ("trust_account_earnings.csv", "index_rates.csv"):
        path = inputs / OTHER.deal_id / name
        path.write_text("".join(r for r in path.open() if f",{date}," not in f",{r}"))
    unreadable = payment_periods(OTHER)[UNREADABLE - 1].collection_period
    (deliveries(inputs, OTHER.deal_id) / unreadable / "loan_status.csv").write_bytes(
        b"\x00\x01 not a tape\n"
    )
    code = run_pipeline(warehouse_paths(inputs, folder / "run"))
    (folder / "exit_code").write_text(str(code))


def _drop_a_payment_before_a_payoff(folder: Path, period_number: int) -> str:
    """Remove from the period's transactions every row of a receivable that the next tape reports
    paid in full; return it."""
    period, payoff = (p.collection_period for p in payment_periods(OTHER)[period_number - 1 :][:2])
    with (folder / payoff / "loan_status.csv").open(newline="") as handle:
        paid = {
            row["assetNumber"]
            for row in csv.DictReader(handle)
            if row["loanStatus"] == "paid_in_full"
            and Decimal(row["reportingPeriodBeginningLoanBalanceAmount"]) > 0
        }
    transactions = folder / period / "payment_transactions.csv"
    with transactions.open(newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    dropped = min(row["assetNumber"] for row in rows if row["assetNumber"] in paid)
    with transactions.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(row for row in rows if row["assetNumber"] != dropped)
    return dropped


def _overpay_a_receivable(folder: Path, period_number: int) -> None:
    """Make a current receivable's first payment of the period its beginning balance plus $1,000:
    more than its payoff."""
    period = payment_periods(OTHER)[period_number - 1].collection_period
    with (folder / period / "loan_status.csv").open(newline="") as handle:
        begin = {
            row["assetNumber"]: Decimal(row["reportingPeriodBeginningLoanBalanceAmount"])
            for row in csv.DictReader(handle)
            if row["loanStatus"] == "current"
        }
    transactions = folder / period / "payment_transactions.csv"
    with transactions.open(newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    row = max(
        (r for r in rows if r["transactionType"] == "payment" and r["assetNumber"] in begin),
        key=lambda r: r["assetNumber"],
    )
    row["transactionAmount"] = str(begin[row["assetNumber"]] + 1000)
    with transactions.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _certificates(con, deal_id: str) -> dict:
    out: dict = {}
    for date, line, value in con.execute(
        "select distribution_date, line, value from marts.rpt_servicer_certificate "
        "where deal_id = ? order by all",
        [deal_id],
    ).fetchall():
        out.setdefault(date, {})[line] = value
    return out


def test_one_trust_s_bad_delivery_withholds_its_certificates_only(shelf):
    assert shelf["code"] == 3  # some certificate withheld
    con = duckdb.connect(str(shelf["paths"]["published"]), read_only=True)
    gate = con.execute(
        "select deal_id, distribution_date, is_publishable, withheld_reason "
        "from quality.certificate_gate order by all"
    ).fetchall()
    sample = [g for g in gate if g[0] == SAMPLE.deal_id]
    other = [g for g in gate if g[0] == OTHER.deal_id]
    assert len(sample) == FIRST_YEAR and all(g[2] for g in sample)
    assert [g[2] for g in other] == [True] * (BAD - 1) + [False] * (FIRST_YEAR - BAD + 1)
    assert "1122(d)(4)(v)" in other[BAD - 1][3]  # the receivable's balance is not the servicer's
    assert all("whose state it carries, is withheld" in g[3] for g in other[BAD:])
    # the period after the payoff: the Pool Balance does not roll forward, a servicing criterion
    # of the period (not a failed build of every trust)
    criteria = con.execute(
        "select period_number, pool_roll_forward_difference_amount from "
        "marts.rpt_servicing_criteria where deal_id = ? and pool_roll_forward_difference_amount "
        "<> 0",
        [OTHER.deal_id],
    ).fetchall()
    # the payment beyond a payoff: not applied (the obligor's), the build goes on
    overpaid = con.execute(
        "select count(*) from intermediate.int_receivable__simple_interest_steps "
        "where deal_id = ? and collection_period = ? and unapplied_cents > 0",
        [OTHER.deal_id, payment_periods(OTHER)[BAD - 1].collection_period],
    ).fetchone()[0]
    missing_inputs = con.execute(
        "select period_number, missing_market_input_count from marts.rpt_servicing_criteria "
        "where deal_id = ? and missing_market_input_count <> 0",
        [OTHER.deal_id],
    ).fetchall()
    unreadable = payment_periods(OTHER)[UNREADABLE - 1].collection_period
    rejected = con.execute(
        "select scope from raw.deliveries where deal_id = ? and status = 'rejected'",
        [OTHER.deal_id],
    ).fetchall()
    con.close()
    assert [number for number, _ in criteria] == [BAD + 2] and criteria[0][1] < 0
    assert missing_inputs == [(BAD + 1, 1)]
    assert overpaid == 1
    assert rejected == [(unreadable,)]
    reports = shelf["paths"]["reports"]
    index = (reports / "index.html").read_text()
    assert OTHER.trust_name in index and SAMPLE.trust_name in index
    assert (reports / SAMPLE.deal_id / "index.html").exists()
    assert (reports / OTHER.deal_id / "index.html").exists()


def test_a_trust_in_the_shelf_gives_the_certificates_it_gives_alone(shelf, built_warehouse):
    shared = duckdb.connect(str(shelf["paths"]["published"]), read_only=True)
    alone = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    in_shelf = _certificates(shared, SAMPLE.deal_id)
    by_itself = _certificates(alone, SAMPLE.deal_id)
    shared.close()
    alone.close()
    assert len(in_shelf) == FIRST_YEAR
    for date, lines in in_shelf.items():
        assert lines == by_itself[date], date  # every line, the alone build's first year


def test_the_other_structure_matches_the_references_from_its_files(shelf):
    """2012-3 (seven classes, no floating class): every line the reference computes, on the
    periods before its bad delivery, to the cent."""
    expected = certificate_from_files(shelf["reference_inputs"], OTHER)
    con = duckdb.connect(str(shelf["paths"]["published"]), read_only=True)
    actual = _certificates(con, OTHER.deal_id)
    con.close()
    assert sorted(expected) == sorted(actual)[: BAD - 1]
    layout = certificate_layout(OTHER)
    compared = 0
    for date, values in expected.items():
        for line in layout:
            if line.key in values and values[line.key] is not None:
                got = actual[date][line.line]
                assert got is not None and Decimal(got) == Decimal(values[line.key]), (date, line)
                compared += 1
    assert compared > 100 * (BAD - 1)


def test_the_shelf_compares_trusts_by_deal_age_as_computed_by_hand(shelf):
    con = duckdb.connect(str(shelf["paths"]["published"]), read_only=True)
    rows = con.execute(
        "select age.deal_id, age.months_since_cutoff, age.pool_factor_percent, "
        "age.cumulative_net_loss_percent, age.excess_spread_annualized_percent, "
        "dates.ending_pool_balance, dates.cumulative_net_losses_amount, "
        "dates.available_finance_charge_collections_amount, dates.total_servicing_fee_amount, "
        "dates.interest_paid_amount, dates.beginning_pool_balance, age.collection_period "
        "from marts.rpt_shelf_performance_by_age as age "
        "inner join marts.fct_distribution_date as dates using (deal_id, collection_period) "
        "order by all"
    ).fetchall()
    con.close()
    ten = Decimal("1E-10")
    seen = set()
    for row in rows:
        deal_id, age, factor, cnl, spread, ending, losses, charges, fee, interest, begin = row[:11]
        period = row[11]
        deal = SAMPLE if deal_id == SAMPLE.deal_id else OTHER
        months = (
            (int(period[:4]) - deal.cutoff_date.year) * 12
            + int(period[5:])
            - (deal.cutoff_date.month)
        )
        assert age == months, (deal_id, period)
        hundred = Decimal(100)
        initial = deal.initial_pool_balance
        assert factor == (ending * hundred / initial).quantize(ten, ROUND_HALF_UP), period
        assert cnl == (losses * hundred / initial).quantize(ten, ROUND_HALF_UP), period
        by_hand = (charges - fee - interest) * 12 * hundred / begin
        assert spread == by_hand.quantize(ten, ROUND_HALF_UP), period
        seen.add(deal_id)
    assert seen == {SAMPLE.deal_id, OTHER.deal_id}
    assert min(r[1] for r in rows if r[0] == OTHER.deal_id) == 1  # month 1: the first period
    page = (shelf["paths"]["reports"] / "shelf.html").read_text()
    assert page.count("<svg ") == 6 and OTHER.trust_name in page and SAMPLE.trust_name in page
