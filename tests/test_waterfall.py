"""The waterfall and the certificate: dbt output against the plain-Python reference, to the cent."""

import datetime as dt
from decimal import Decimal

import duckdb
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from reference import waterfall

from dagster_project.business_calendar import payment_periods
from dagster_project.certificate_layout import certificate_layout
from dagster_project.deal import load_deal
from dagster_project.ingestion.deal_tables import load_deal_tables
from dagster_project.reconcile import POOL_INPUTS, load_reported_tables

DEAL = load_deal()
LAYOUT = certificate_layout(DEAL)
PERIODS = {p.period_number: p for p in payment_periods(DEAL)}
ART_I_FIRST_INTEREST = {
    "29a": "39678.33",
    "29e": "99341.39",
    "29i": "78602.15",
    "29m": "240890.00",
    "29q": "78008.33",
    "31a": "19818.60",
    "33a": "26031.25",
    "35a": "37187.50",
}


def certificate(con) -> dict:
    """{distribution_date: {line: (key, amount, value)}}."""
    out: dict = {}
    for date, line, key, amount, value in con.execute(
        "select distribution_date, line, key, amount, value from marts.rpt_servicer_certificate "
        "where deal_id = ?",
        [DEAL.deal_id],
    ).fetchall():
        out.setdefault(date, {})[line] = (key, amount, value)
    return out


def period_dicts(con) -> list[dict]:
    """The waterfall's pool inputs as the reference takes them (Decimal, calendar fields)."""
    rows = con.execute(
        "select * exclude (deal_id, collection_period) "
        "from intermediate.int_waterfall__period_inputs "
        "where deal_id = ? order by period_number",
        [DEAL.deal_id],
    )
    names = [d[0] for d in rows.description]
    out = []
    for values in rows.fetchall():
        row = dict(zip(names, values, strict=True))
        for key, value in row.items():
            if isinstance(value, int) and key != "period_number":
                row[key] = Decimal(value)
            elif value is None and key not in (
                "tangible_net_worth_amount",
                "weighted_average_coupon_percent",
                "weighted_average_original_term",
                "weighted_average_remaining_term",
            ):
                row[key] = Decimal("0")
        row["actual_days"] = int(row["actual_accrual_days"])
        row["thirty_360_days"] = int(row["thirty_360_accrual_days"])
        out.append(row)
    return out


def mismatches(expected: dict, actual: dict) -> list[tuple]:
    """Every layout line whose key the reference computes, compared to the cent."""
    wrong = []
    compared = 0
    for date, values in expected.items():
        lines = actual[date]
        for layout_line in LAYOUT:
            if layout_line.key not in values:
                continue
            compared += 1
            _key, amount, _value = lines[layout_line.line]
            want = values[layout_line.key]
            if amount is None or want is None:
                if amount != want:
                    wrong.append((date, layout_line.line, layout_line.key, want, amount))
            elif Decimal(amount) != Decimal(want):
                wrong.append(
                    (date, layout_line.line, layout_line.key, values[layout_line.key], amount)
                )
    assert compared > 0
    return wrong


@pytest.fixture(scope="module")
def published(built_warehouse):
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    yield con
    con.close()


def test_first_distribution_date_shows_the_article_one_interest_amounts(published):
    first = certificate(published)[dt.date(2015, 11, 16)]
    for line, amount in ART_I_FIRST_INTEREST.items():
        assert first[line][2] == amount, line
    assert first["15"][2] == "0.17166"  # the LIBOR implied by $78,602.15
    assert first["7"][2] == "1050000018.44"
    assert first["10"][2] == "5250000.09"


def test_every_exhibit_a_line_is_filled_for_every_distribution_date(published):
    cert = certificate(published)
    dates = [
        r[0]
        for r in published.execute(
            "select distribution_date from intermediate.int_waterfall__period_inputs"
        ).fetchall()
    ]
    assert sorted(cert) == sorted(dates) and len(dates) > 12
    expected = [line.line for line in LAYOUT]
    numbers = {line.rstrip("abcdefghijklmnopqrstuvwxyz_").split("_")[0] for line in expected}
    assert {str(n) for n in range(1, 81)} <= {
        n.rstrip("abcdefghijklmnopqrstuvwxyz") for n in numbers
    }
    for date, lines in cert.items():
        assert sorted(lines) == sorted(expected), date
        empty = [line for line, (_k, _a, value) in lines.items() if value is None]
        assert not empty, (date, empty)


def test_certificate_matches_the_reference_on_the_sample_deal(published):
    expected = waterfall.run(DEAL, period_dicts(published))
    assert mismatches(expected, certificate(published)) == []


def test_sources_equal_uses_and_notes_plus_overcollateralization_equal_the_pool(published):
    for date, lines in certificate(published).items():
        amount = {line: Decimal(a) for line, (_k, a, _v) in lines.items() if a is not None}
        assert amount["43e"] == amount["44f"] == amount["25"], date
        assert sum(amount[f"44{x}"] for x in "abcde") == amount["44f"], date
        assert amount["8i_end"] + amount["11"] == amount["5"], date
        assert amount["45q"] == amount["46i"], date


def test_the_references_from_the_delivered_files_give_the_same_certificate(published, small_deal):
    """Independent end to end: the loan-level reference replays the tapes and transactions, the
    waterfall reference runs on its pool figures; no dbt output goes in."""
    from reference.from_files import certificate_from_files

    expected = certificate_from_files(small_deal)
    assert len(expected) == len(certificate(published))
    assert mismatches(expected, certificate(published)) == []


# --- generated stress scenarios, in reconciliation mode (pool inputs given directly) ---------

MONEY = Decimal("0.01")


def opening_for(period_number: int, pool_begin: Decimal, draw) -> list[tuple]:
    """Class balances a pool of `pool_begin` could carry: juniors outstanding, seniors paid down."""
    if period_number == 1:
        return [
            (1, c.class_id, str(c.initial_balance), "0", str(DEAL.initial_reserve_deposit), "0")
            for c in DEAL.classes
        ]
    oc = (DEAL.overcollateralization_target * draw(st.integers(0, 100)) / 100).quantize(MONEY)
    remaining = pool_begin - oc
    balances = {}
    for c in reversed(DEAL.classes):
        take = min(remaining, c.initial_balance)
        balances[c.class_id] = max(take, Decimal("0"))
        remaining -= balances[c.class_id]
    reserve = Decimal(draw(st.integers(0, 262500005))) / 100
    fee_unpaid = Decimal(draw(st.sampled_from([0, 0, 150000]))) / 100
    rows = []
    for c in DEAL.classes:
        unpaid = (
            Decimal(draw(st.sampled_from([0, 0, 0, 123456]))) / 100 if balances[c.class_id] else 0
        )
        rows.append(
            (
                period_number,
                c.class_id,
                str(balances[c.class_id]),
                str(unpaid),
                str(reserve),
                str(fee_unpaid),
            )
        )
    return rows


@st.composite
def stress_scenarios(draw):
    start = draw(st.sampled_from([1, 2, 12, 13, 40, 60]))  # 12: Class A-1 Final Distribution Date
    months = draw(st.integers(1, 6))
    pool = (
        draw(
            st.sampled_from(
                [
                    Decimal("1050000018.44"),
                    Decimal("600000000.00"),
                    Decimal("104999999.99"),
                    Decimal("40000000.00"),
                    Decimal("3000000.00"),
                ]
            )
        )
        if start > 1
        else DEAL.initial_pool_balance
    )
    opening = opening_for(start, pool, draw)
    rows = []
    for offset in range(months):
        number = start + offset
        if number not in PERIODS:
            break
        period = PERIODS[number]
        principal_pct = draw(st.integers(0, 60))  # tenths of a percent
        default_pct = draw(st.sampled_from([0, 2, 10, 50, 200]))
        payoff = draw(st.booleans()) and draw(st.booleans()) and draw(st.booleans())
        principal = pool if payoff else (pool * principal_pct / 1000).quantize(MONEY)
        defaults = (
            Decimal("0")
            if payoff
            else min(pool - principal, (pool * default_pct / 1000).quantize(MONEY))
        )
        finance = (pool * Decimal(draw(st.sampled_from([0, 1, 20, 58]))) / 10000).quantize(MONEY)
        ending = pool - principal - defaults
        row = {name: "0" for name, *_ in POOL_INPUTS}
        row.update(
            distribution_date=period.distribution_date,
            beginning_pool_balance=str(pool),
            principal_collections_amount=str(principal),
            defaulted_receivables_amount=str(defaults),
            ending_pool_balance=str(ending),
            receivables_outstanding="0" if ending == 0 else "1000",
            initial_pool_balance=str(DEAL.initial_pool_balance),
            index_rate=str(Decimal(draw(st.integers(0, 300))) / 10000),
            finance_charge_collections_amount=str(finance),
            liquidation_principal_amount=str((defaults * Decimal("0.4")).quantize(MONEY)),
            reserve_investment_earnings_amount=str(Decimal(draw(st.integers(0, 100000))) / 100),
            tangible_net_worth_amount="2000000000.00",
        )
        rows.append(row)
        pool = ending
    return opening, rows


def reference_periods(rows: list[dict]) -> list[dict]:
    by_date = {p.distribution_date: p for p in PERIODS.values()}
    out = []
    for row in rows:
        period = by_date[row["distribution_date"]]
        values = {k: Decimal(v) for k, v in row.items() if k != "distribution_date"}
        values.update(
            distribution_date=period.distribution_date,
            period_number=period.period_number,
            actual_days=period.actual_days,
            thirty_360_days=period.thirty_360_days,
        )
        out.append(values)
    return out


def reference_state(opening: list[tuple]) -> waterfall.State:
    return waterfall.State(
        balances={cid: Decimal(b) for _n, cid, b, *_ in opening},
        unpaid_interest={cid: Decimal(u) for _n, cid, _b, u, *_ in opening},
        reserve=Decimal(opening[0][4]),
        fee_unpaid=Decimal(opening[0][5]),
    )


def models_and_reference(runner, rows: list[dict], opening: list[tuple]):
    """The dbt models (reconciliation mode) and the plain-Python reference on the same reported
    periods and opening state: (connection, the reference's figures per date)."""

    def load(con):
        load_deal_tables(con, [DEAL])
        load_reported_tables(con, rows, [(DEAL.deal_id, *row) for row in opening])

    con = runner.run(load, up_to="rpt_servicer_certificate")
    expected = waterfall.run(
        DEAL,
        reference_periods([{k: v for k, v in r.items() if k != "deal_id"} for r in rows]),
        reference_state(opening),
    )
    return con, expected


@settings(
    max_examples=30,
    deadline=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(scenario=stress_scenarios())
def test_stress_scenarios_match_the_reference(reported_model_runner, scenario):
    opening, rows = scenario
    # raw.reported_opening_state: the state before the first Distribution Date computed
    opening = [(PERIODS_BY_DATE[rows[0]["distribution_date"]], *rest[1:]) for rest in opening]
    rows = [{"deal_id": DEAL.deal_id, **row} for row in rows]

    con, expected = models_and_reference(reported_model_runner, rows, opening)
    for date, values in expected.items():
        if values["reserve_account_draw_amount"] > 0:
            event("reserve draw")
        if values["reserve_account_ending_balance"] == 0:
            event("reserve exhausted or released")
        if any(values[f"additional_note_interest:{c.class_id}"] > 0 for c in DEAL.classes):
            event("Additional Note Interest")
        if values["ending_pool_balance"] == 0:
            event("pool paid off")
        if values["servicing_fee_shortfall_amount"] > 0:
            event("servicing fee shortfall")
        if values["priority_principal_distributable_amount"] > 0:
            event("Priority Principal Distributable Amount")
        if date >= DEAL.classes[0].final_distribution_date and values["class_balance_begin:A-1"]:
            event("Class A-1 on or after its Final Distribution Date")
        if values["ending_pool_balance"] <= DEAL.initial_pool_balance * DEAL.clean_up_call_percent:
            event("Pool Balance at or below the clean-up call threshold")
    assert mismatches(expected, certificate(con)) == []


PERIODS_BY_DATE = {p.distribution_date: p.period_number for p in PERIODS.values()}


def test_class_final_distribution_date_forces_the_class_paid(reported_model_runner):
    """At the Class A-1 Final Distribution Date (2016-10-17) A-1 is paid in full if funds allow,
    even though the pool alone would not call for it (the Priority override of Art. I)."""
    period = PERIODS[12]
    assert period.distribution_date == dt.date(2016, 10, 17)
    pool = Decimal("800000000.00")
    opening = [
        (
            12,
            c.class_id,
            str(c.initial_balance if c.class_id != "A-1" else Decimal("5000000.00")),
            "0",
            "2625000.05",
            "0",
        )
        for c in DEAL.classes
    ]
    opening = [
        (12, cid, b if cid != "A-2a" else "100000000.00", u, r, f)
        for _n, cid, b, u, r, f in opening
    ]
    row = {name: "0" for name, *_ in POOL_INPUTS}
    row.update(
        distribution_date=period.distribution_date,
        beginning_pool_balance=str(pool),
        principal_collections_amount="1000.00",
        ending_pool_balance=str(pool - Decimal("1000.00")),
        receivables_outstanding="50000",
        initial_pool_balance=str(DEAL.initial_pool_balance),
        finance_charge_collections_amount="6000000.00",
        index_rate="0.005",
    )

    row["deal_id"] = DEAL.deal_id

    def load(con):
        load_deal_tables(con, [DEAL])
        load_reported_tables(con, [row], [(DEAL.deal_id, *row) for row in opening])

    con = reported_model_runner.run(load, up_to="rpt_servicer_certificate")
    lines = certificate(con)[period.distribution_date]
    assert lines["30"][2] == "5000000.00"  # Priority Principal Distributable Amount
    assert lines["8a_end"][2] == "0.00"


def test_notes_above_the_pool_never_make_the_reserve_negative(reported_model_runner):
    """Only Class D left (3,000,000.00), a Pool Balance 6,000.00 below it, the
    Overcollateralization Target above the Pool Balance, an empty Reserve Account: the Regular
    Principal Distributable Amount, literally read (Art. I), is the whole Note Balance on top of
    the Quaternary amount; the Note Balance after the day's principal is then zero, not
    -6,000.00, so the Required Reserve Account Amount is zero and nothing is released from an
    empty reserve (hypothesis found it). Two periods, as found: the second starts from the first."""
    first, second = PERIODS[2], PERIODS[3]
    opening = [
        (2, c.class_id, "3000000.00" if c.class_id == "D" else "0.00", "0", "0", "0")
        for c in DEAL.classes
    ]
    rows = []
    for period, begin, end, defaulted, liquidation in (
        (first, "3000000.00", "2994000.00", "6000.00", "2400.00"),
        (second, "2994000.00", "2994000.00", "0.00", "0.00"),
    ):
        row = {name: "0" for name, *_ in POOL_INPUTS}
        row.update(
            deal_id=DEAL.deal_id,
            distribution_date=period.distribution_date,
            beginning_pool_balance=begin,
            ending_pool_balance=end,
            defaulted_receivables_amount=defaulted,
            liquidation_principal_amount=liquidation,
            receivables_outstanding="1000",
            initial_pool_balance=str(DEAL.initial_pool_balance),
            tangible_net_worth_amount="2000000000.00",
        )
        rows.append(row)

    con, expected = models_and_reference(reported_model_runner, rows, opening)
    assert mismatches(expected, certificate(con)) == []
    for values in expected.values():
        assert values["reserve_account_ending_balance"] == 0
        assert values["servicing_fee_paid_amount"] >= 0
    lines = certificate(con)[second.distribution_date]
    assert lines["58"][2] == "0.00" and lines["26c"][2] == "0.00"


def test_clean_up_call_and_net_worth_flags_follow_their_thresholds(published):
    rows = published.execute(
        """
        select s.distribution_date, s.amount, c.amount
        from marts.rpt_noteholder_statement as s
        inner join marts.rpt_servicer_certificate as c
            on s.deal_id = c.deal_id and s.distribution_date = c.distribution_date and c.line = '5'
        where s.item = '9.1(a)'
        """
    ).fetchall()
    threshold = DEAL.initial_pool_balance * DEAL.clean_up_call_percent
    assert {flag for _d, flag, _pool in rows} == {0, 1}  # the sample pool crosses 10%
    for date, flag, pool in rows:
        assert flag == (1 if pool <= threshold else 0), date
    items = {
        r[0]
        for r in published.execute(
            "select distinct item from marts.rpt_noteholder_statement"
        ).fetchall()
    }
    roman = [
        "i",
        "ii",
        "iii",
        "iv",
        "v",
        "vi",
        "vii",
        "viii",
        "ix",
        "x",
        "xi",
        "xii",
        "xiii",
        "xiv",
        "xv",
        "xvi",
        "xvii",
        "xviii",
        "xix",
        "xx",
        "xxi",
        "xxii",
    ]
    assert {f"({r})" for r in roman} <= items


@pytest.mark.parametrize(
    "deal_file, lines",
    [
        ("caot_2015_4.yaml", ("44d", "50", "51", "52", "53", "54", "55", "56", "57", "58")),
        ("caot_2012_3.yaml", ("42d", "48", "49", "50", "51", "52", "53", "54", "55", "56")),
    ],
)
def test_the_reserve_lines_refer_to_the_deal_s_own_line_numbers(deal_file, lines):
    """The Reserve Account Reconciliation prints its arithmetic with line references, as the
    published certificates do (2015-4, 2015-11-16: "54. Reserve Account Amount (Ln 51 + Ln 52 -
    Ln 53)", "55. Deposit from Available Funds (Ln 44d)"); a deal with fewer classes numbers its
    lines lower, and its references follow."""
    from dagster_project.deal import PROJECT_ROOT

    layout = certificate_layout(load_deal(PROJECT_ROOT / "data" / "deals" / deal_file))
    deposit, required, begin, earnings, draw, amount, deposited, released, surplus, end = lines
    label = {line.line: line.label for line in layout}
    assert label[deposit] == "Deposit to Reserve Account"
    assert label[required] == "Required Reserve Account Amount"
    assert label[amount] == f"Reserve Account Amount (Ln {begin} + Ln {earnings} - Ln {draw})"
    assert label[deposited] == f"Deposit from Available Funds (Ln {deposit})"
    assert label[surplus].endswith(f"described in Ln {released} exist")
    assert label[end] == f"Ending Balance (Ln{amount} + Ln{deposited} - Ln{released} - Ln{surplus})"
    deficiency = str(int(end) + 1)
    assert label[deficiency] == f"Reserve Account Deficiency (Ln{required} - Ln{end})"
    assert {line.key for line in layout if line.line == deposited} == {
        "reserve_account_deposit_amount"
    }
