"""Projections: the pool engine against closed forms and a plain-Python reference of its
recurrences, the clean-up call, the weighted average life by hand, the breakeven search, and a
projection of the built sample deal through the certificate's own waterfall."""

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal, localcontext

import pytest
from conftest import DEAL_ID

from dagster_project.deal import shelf_deal
from dagster_project.projections import analysis, waterfall
from dagster_project.projections.engine import (
    UNIT,
    contractual_paths,
    pool_lines,
    project,
)
from dagster_project.projections.scenarios import ScenarioError, load_scenarios, scenario

CENT = Decimal("0.01")


def cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, ROUND_HALF_UP)


def identical_pool(count: int, age: int = 0):
    """`count` receivables of $10,000 at 6% for 12 months, level payment $860.66."""
    return contractual_paths(
        [60000] * count, [12] * count, [age] * count, [10000 * UNIT] * count, [860_660_000] * count
    )


def scheduled_balance(months: int) -> Decimal:
    """One receivable's contractual balance after `months` payments (all of it in month 12)."""
    balance = Decimal(10000)
    for _ in range(months):
        interest = (balance * Decimal("0.06") / 12).quantize(Decimal("0.000001"), ROUND_HALF_UP)
        balance += interest
        balance -= Decimal("860.66")
    return balance if months < 12 else Decimal(0)


@pytest.mark.parametrize("age", [0, 6])
def test_at_a_fixed_abs_speed_the_pool_follows_the_closed_form_to_the_cent(age):
    """ABS counts receivables: of N0 receivables aged `age`, N0 (1 - ABS (age + t)) / (1 - ABS
    age) remain after t months, each on its scheduled balance."""
    speed = Decimal("0.015")
    months = project(identical_pool(100, age), scenario({"name": "abs", "abs": "0.015"}))
    assert len(months) == 12
    for m in months:
        share = (1 - speed * (age + m.month)) / (1 - speed * age)
        assert cents(m.ending) == cents(100 * share * scheduled_balance(m.month)), m.month
        if m.month < 12:  # in the last month every receivable's term ends
            assert abs(m.receivables - 100 * share) < Decimal("1e-20")


def test_cpr_cdr_severity_and_lag_follow_the_recurrences_by_hand():
    """A plain-Python reference of the engine's month (projections/engine.py docstring) on one
    receivable, with defaults, a CPR and recoveries four months later."""
    s = scenario(
        {"name": "stress", "cpr": "0.12", "cdr": "0.06", "severity": "0.55",
         "recovery_lag_months": 4, "clean_up_call": False}
    )  # fmt: skip
    months = project(identical_pool(1, age=3), s)
    with localcontext() as context:
        context.prec = 34
        mdr = 1 - (1 - Decimal("0.06")) ** (Decimal(1) / 12)
        smm = 1 - (1 - Decimal("0.12")) ** (Decimal(1) / 12)
        share, expected = Decimal(1), []
        for t in range(1, 13):
            before, after = scheduled_balance(t - 1), scheduled_balance(t)
            defaulted = share * mdr * before
            share = share * (1 - mdr) * (1 - smm)
            expected.append((defaulted, share * after))
    assert [(cents(m.defaulted), cents(m.ending)) for m in months] == [
        (cents(d), cents(e)) for d, e in expected
    ]
    lines = pool_lines(months, s, None)
    for line in lines:
        recovered = expected[line.month - 5][0] * (1 - Decimal("0.55")) if line.month > 4 else 0
        assert line.recoveries == cents(Decimal(recovered))
        assert line.beginning - line.principal - line.defaulted - line.purchased == line.ending


def test_the_clean_up_call_buys_the_pool_on_the_first_month_at_or_below_the_threshold():
    s = scenario({"name": "abs", "abs": "0.015"})
    months = project(identical_pool(100), s)
    threshold = Decimal("100000.00")  # 10% of the $1,000,000 pool
    lines = pool_lines(months, s, threshold)
    called = lines[-1]
    assert called.purchased == cents(months[called.month - 1].ending) <= threshold
    assert called.ending == 0 and called.receivables == 0
    assert all(cents(m.ending) > threshold for m in months[: called.month - 1])
    assert len(pool_lines(months, scenario({"name": "x", "abs": "0.015",
                                            "clean_up_call": False}), threshold)) == 12  # fmt: skip


def test_scenarios_are_data_and_a_bad_entry_is_named(tmp_path):
    assert [s.name for s in load_scenarios()][:5] == [
        "abs-0.5", "abs-1.0", "abs-1.3", "abs-1.5", "abs-1.8"
    ]  # fmt: skip
    bad = tmp_path / "s.yaml"
    bad.write_text("scenarios:\n  - {name: x, abs: 0.013}\n")
    with pytest.raises(ScenarioError, match="'abs' must be a quoted decimal"):
        load_scenarios(bad)
    bad.write_text('scenarios:\n  - {name: x, abs: "0.013", cpr: "0.1"}\n')
    with pytest.raises(ScenarioError, match="one prepayment speed"):
        load_scenarios(bad)


def test_the_weighted_average_life_by_hand():
    deal = shelf_deal(DEAL_ID)
    start = waterfall.Opening(
        0, {c.class_id: c.initial_balance for c in deal.classes}, {}, Decimal(0), Decimal(0),
        Decimal(0), dt.date(2020, 1, 1),
    )  # fmt: skip
    first = deal.classes[0]
    half = first.initial_balance / 2
    notes = [
        (first.class_id, dt.date(2020, 12, 31), half, Decimal(0), half),  # 365 days
        (first.class_id, dt.date(2021, 12, 31), half, Decimal(0), Decimal(0)),  # 730 days
    ]
    result = waterfall.class_results(deal, start, notes)[0]
    assert result.weighted_average_life == Decimal("1.50")
    assert (result.first_principal_date, result.last_principal_date) == (
        dt.date(2020, 12, 31),
        dt.date(2021, 12, 31),
    )
    assert result.principal_loss == 0


def test_the_breakeven_search_brackets_each_class(monkeypatch):
    """The search on a stand-in waterfall whose class k loses principal from a CDR of k x 7%."""
    deal = shelf_deal(DEAL_ID)
    thresholds = {c.class_id: Decimal("0.07") * (n + 1) for n, c in enumerate(deal.classes)}
    runs = []

    def fake_run(_deal, _start, _paths, scenarios):
        runs.append(len(scenarios))
        return [
            analysis.ScenarioResult(
                s, [], {}, [],
                [waterfall.ClassResult(c, None, None, None,
                                       Decimal(1) if s.cdr >= t else Decimal(0))
                 for c, t in thresholds.items()],
            )
            for s in scenarios
        ]  # fmt: skip

    monkeypatch.setattr(analysis, "_run", fake_run)
    result = analysis.ProjectionResult(deal, None, [], Decimal(0))
    found = analysis._breakevens(deal, None, None, load_scenarios()[2], result)
    for b in found:
        threshold = thresholds[b.class_id]
        if threshold > Decimal("0.90"):
            assert b.loss_cdr is None
            continue
        assert b.no_loss_cdr < threshold <= b.loss_cdr
        assert b.loss_cdr - b.no_loss_cdr <= Decimal("0.004")
    assert len(runs) == 1 + analysis.BREAKEVEN_ROUNDS  # one build per round


def test_a_projection_of_the_sample_deal_runs_through_the_waterfall(built_warehouse, tmp_path):
    """The built sample deal from its cutoff pool: with no losses every class is repaid in
    full, in order, and the clean-up call ends it; a stress scenario loses more; the tables are
    keyed by scenario and the report renders."""
    from dagster_project.projections.report import write_report

    deal = shelf_deal(DEAL_ID)
    scenarios = [s for s in load_scenarios() if s.name in ("abs-1.3", "base-stress")]
    result = analysis.run_projection(built_warehouse["published"], deal, scenarios)
    calm, stress = result.scenarios
    paid = {c.class_id: Decimal(0) for c in deal.classes}
    for class_id, _date, principal, _interest, _ending in calm.notes:
        paid[class_id] += principal
    assert paid == {c.class_id: c.initial_balance for c in deal.classes}
    assert all(c.principal_loss == 0 for c in calm.classes)
    lives = [c.weighted_average_life for c in calm.classes]
    assert lives == sorted(lives) and lives[0] > 0
    assert calm.clean_up_call_date == calm.dates[calm.pool[-1].month]
    assert calm.pool[0].beginning == sum(
        (Decimal(x) for x in _schedule_balances(built_warehouse)), Decimal(0)
    )
    assert stress.cumulative_net_loss > calm.cumulative_net_loss == 0
    # the reserve and the overcollateralization the same waterfall keeps, every projected date
    assert [a[0] for a in calm.accounts] == [calm.dates[p.month] for p in calm.pool]
    target = deal.overcollateralization_target
    assert all(oc >= 0 for _d, _r, oc, _t in calm.accounts[:-1])
    assert calm.accounts[0][3] == target and calm.accounts[-1][2] == 0  # all repaid at the call
    result.write(tmp_path / "projections.duckdb")
    write_report(result, tmp_path / "projections.html")
    import duckdb

    con = duckdb.connect(str(tmp_path / "projections.duckdb"), read_only=True)
    assert con.execute(
        "select scenario, count(*) from projection.rpt_projected_class group by 1 order by 1"
    ).fetchall() == [("abs-1.3", len(deal.classes)), ("base-stress", len(deal.classes))]
    assert con.execute(
        "select count(*) from projection.fct_projected_accounts where scenario = 'abs-1.3'"
    ).fetchone() == (len(calm.pool),)
    con.close()
    page = (tmp_path / "projections.html").read_text()
    assert page.count("<svg ") == 2 and "weighted average life" in page


def _schedule_balances(built):
    import duckdb

    con = duckdb.connect(str(built["published"]), read_only=True)
    try:
        return [
            row[0]
            for row in con.execute(
                "select principal_balance from raw.receivable_schedule where deal_id = ?",
                [DEAL_ID],
            ).fetchall()
        ]
    finally:
        con.close()


def test_a_projection_can_start_after_any_computed_period(built_warehouse):
    """The pool after period 6 is the receivables outstanding then, and the notes, reserve and
    unpaid amounts are those of that Distribution Date."""
    import duckdb

    from dagster_project.projections.starting_point import opening, pool_paths

    deal = shelf_deal(DEAL_ID)
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    try:
        period = con.execute(
            "select collection_period, distribution_date, ending_pool_balance "
            "from marts.fct_distribution_date where deal_id = ? and period_number = 6",
            [DEAL_ID],
        ).fetchone()
        paths = pool_paths(con, deal, period[0])
        start = opening(con, deal, period[0])
        notes = dict(
            con.execute(
                "select class_id, ending_balance from marts.fct_note_distribution "
                "where deal_id = ? and distribution_date = ?",
                [DEAL_ID, period[1]],
            ).fetchall()
        )
        reserve = con.execute(
            "select reserve_account_ending_balance from marts.fct_distribution_date "
            "where deal_id = ? and period_number = 6",
            [DEAL_ID],
        ).fetchone()[0]
    finally:
        con.close()
    assert Decimal(int(paths.balance[:, 0].sum())) / UNIT == period[2]
    assert start.period_number == 6 and start.settlement_date == period[1]
    assert start.note_balances == notes and start.reserve_balance == reserve
