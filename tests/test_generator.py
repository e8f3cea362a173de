import csv
import datetime as dt
import hashlib
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from conftest import DEAL_ID

from dagster_project.deal import load_deal
from dagster_project.generator.__main__ import generate, generate_shelf
from dagster_project.generator.calibration import calibration
from dagster_project.generator.schedule import BREACH_KINDS, BREACHES_PER_KIND, build_schedule

ROOT = Path(__file__).resolve().parents[1]
SHELF_FILES = ("caot_2012_3.yaml", "caot_2015_4.yaml")


@pytest.fixture(scope="module")
def full_schedule():
    deal = load_deal()
    return deal, build_schedule(
        deal, deal.initial_receivable_count, np.random.default_rng(20151028)
    )


def test_full_size_pool_hits_the_deal_targets(full_schedule):
    deal, schedule = full_schedule
    frame = schedule.frame
    balance = frame["principal_balance_cents"].astype(object)
    assert len(frame) == 63_500
    assert sum(int(x) for x in balance) == 105_000_001_844  # exactly $1,050,000,018.44
    total = balance.sum()
    used = frame.loc[frame["vehicle_new_used"] == "used", "principal_balance_cents"].sum()
    assert abs(used / total - 0.9925) < 0.001  # 2.3(s)
    wa_remaining = (frame["remaining_term"] * frame["principal_balance_cents"]).sum() / total
    assert abs(wa_remaining - 61.32) < 0.5  # 2.3(v)
    wac = (frame["apr_e6"] * frame["principal_balance_cents"]).sum() / total / 1e4
    assert 6.5 < wac < 7.5  # about 7%


def test_every_receivable_outside_the_manifest_meets_section_2_3(full_schedule):
    deal, schedule = full_schedule
    frame = schedule.frame.drop(index=[b["row"] for b in schedule.breaches])
    assert (frame["origination_date"] > np.datetime64(dt.date(2009, 7, 26))).all()  # (t)
    assert frame["original_term"].between(24, 72).all()  # (u)
    assert frame["remaining_term"].between(3, 71).all()  # (u)
    assert (frame["principal_balance_cents"] >= 50_000).all()  # (q)
    assert (frame["apr_e6"] <= 250_000).all()  # (w)
    assert (frame["days_past_due"] <= 30).all()  # (k), (z)
    assert (frame["payments_made"] >= 1).all()  # (a)(viii)
    assert (frame["interest_calculation_method"] == "simple").all()  # (a)(vii)
    assert ~frame["is_bankrupt"].any() and ~frame["is_repossessed"].any()  # (r), (a)(vi)
    assert ~frame["is_government_obligor"].any()  # (e)
    assert frame["obligor_state"].str.len().eq(2).all()
    assert not frame["obligor_state"].isin(["PR", "GU", "VI"]).any()  # (a)(ix)
    assert frame["receivable_id"].is_unique  # (b), (p)


def test_breach_manifest_holds_each_kind_a_few_times(full_schedule):
    _, schedule = full_schedule
    kinds = [b["kind"] for b in schedule.breaches]
    for _, kind, _ in BREACH_KINDS:
        assert kinds.count(kind) == BREACHES_PER_KIND


def _digest(folder):
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "generation.json"):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_same_seed_gives_the_same_bytes(tmp_path):
    first = generate(tmp_path / "a", receivables=300, seed=11, progress=False)
    second = generate(tmp_path / "b", receivables=300, seed=11, progress=False)
    assert first["trusts"] == second["trusts"]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    other = generate(tmp_path / "c", receivables=300, seed=12, progress=False)
    assert other["trusts"][0]["seed"] == 12 and _digest(tmp_path / "c") != _digest(tmp_path / "a")


def test_a_trust_s_files_do_not_depend_on_the_other_trusts_of_the_shelf(tmp_path):
    """Each trust's seed follows from its Cutoff Date: 2015-4 generated alone or with 2012-3 is
    the same, byte for byte; the shelf's net worth series covers both trusts' quarters."""
    deals = [load_deal(ROOT / "data" / "deals" / name) for name in SHELF_FILES]
    shelf = generate_shelf(tmp_path / "shelf", deals, 200, seed=5, progress=False, as_of="2016-03")
    alone = generate_shelf(tmp_path / "alone", deals[1:], 200, seed=5, progress=False)
    assert [t["deal_id"] for t in shelf["trusts"]] == ["caot-2012-3", "caot-2015-4"]
    assert shelf["trusts"][1]["seed"] == alone["trusts"][0]["seed"] == 5
    sample = "caot-2015-4"
    months = sorted(p.name for p in (tmp_path / "shelf" / sample / "deliveries").iterdir())
    assert months == ["2015-10", "2015-11", "2015-12", "2016-01", "2016-02", "2016-03"]
    for month in months:  # the as-of month cuts the deliveries, not the trust's draws
        for name in ("loan_status.csv", "payment_transactions.csv"):
            path = Path(sample) / "deliveries" / month / name
            assert (tmp_path / "shelf" / path).read_bytes() == (
                tmp_path / "alone" / path
            ).read_bytes()
    schedule = Path(sample) / "receivable_schedule.csv"
    shelf_schedule = (tmp_path / "shelf" / schedule).read_bytes()
    assert shelf_schedule == (tmp_path / "alone" / schedule).read_bytes()
    with (tmp_path / "shelf" / "tangible_net_worth.csv").open() as handle:
        quarters = {row["fiscal_quarter_end"]: row for row in csv.DictReader(handle)}
    with (tmp_path / "alone" / "tangible_net_worth.csv").open() as handle:
        for row in csv.DictReader(handle):  # the same value for a quarter in both files
            if row["fiscal_quarter_end"] in quarters:
                assert quarters[row["fiscal_quarter_end"]] == row
    assert min(quarters) < "2012-10-15"  # 2012-3's first Distribution Date is covered


def test_small_deal_behaves_like_a_prime_pool(small_deal):
    figures = calibration(small_deal / DEAL_ID)
    assert Decimal(figures["pool_balance"]) == Decimal("1050000018.44")
    low, high = figures["principal_collections_pct_range_first_year"]
    assert low > 1.5 and high < 6
    assert 0.3 < figures["cumulative_net_loss_pct"] < 4.5
    assert 25 < figures["recovery_rate_pct"] < 75
    manifest = json.loads(
        (small_deal / DEAL_ID / "ground_truth" / "breach_manifest.json").read_text()
    )
    assert len(manifest) == len(BREACH_KINDS) * BREACHES_PER_KIND


def test_trusts_beyond_the_deal_files_are_2015_4_issued_a_quarter_apart(tmp_path):
    from dagster_project.business_calendar import is_business_day
    from dagster_project.deal import load_shelf
    from dagster_project.generator.sample_trusts import shelf_of

    deals = shelf_of(5, load_shelf(), tmp_path)
    assert [d.deal_id for d in deals] == [
        "caot-2015-4", "caot-2012-3", "caot-2014-4", "sample-2016-1", "sample-2016-2",
    ]  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(d.path.name for d in deals)
    template, first, second = deals[0], deals[3], deals[4]
    assert (first.cutoff_date, second.cutoff_date) == (dt.date(2015, 12, 31), dt.date(2016, 3, 31))
    assert first.trust_name.startswith("Sample trust 2016-1")  # never a real trust's name
    for deal in (first, second):
        assert is_business_day(deal.first_distribution_date)
        assert deal.first_distribution_date.day in (15, 16, 17)
        assert [c.initial_balance for c in deal.classes] == [
            c.initial_balance for c in template.classes
        ]
        assert all(c.first_period_interest is None for c in deal.classes)
        assert deal.initial_pool_balance == template.initial_pool_balance
    assert first.eligibility["originated_after"] == dt.date(2009, 10, 26)


def test_a_rebate_after_the_month_s_payment_never_pays_the_receivable_off():
    """The case a twenty-trust shelf met: $522.27 owed, the installment of $351.38 paid on
    2019-10-16, then a $174.41 rebate on 2019-10-20, the whole balance left. Applied whole, the
    rebate left a zero balance with four days' interest owing, and the next tape showed a
    receivable with no balance as delinquent (which ingestion rightly rejects). A rebate takes at
    most half the balance it applies to."""
    from dagster_project.generator.performance import PoolSimulation

    sim = PoolSimulation.__new__(PoolSimulation)  # only the state the two methods use
    sim.balance = np.array([52_227], dtype=np.int64)
    sim.apr = np.array([79_900], dtype=np.int64)  # 7.99% in millionths
    sim.carry = np.zeros(1, dtype=np.int64)
    sim.fees_due = np.zeros(1, dtype=np.int64)
    oct_1 = (dt.date(2019, 10, 1) - dt.date(1970, 1, 1)).days
    sim.last_accrual = np.array([oct_1 - 17], dtype=np.int64)  # paid through 2019-09-14
    mask = np.array([True])
    sim._apply_payment(mask, np.array([oct_1 + 15]), np.array([35_138]))
    left = int(sim.balance[0])
    rebated = sim._apply_rebate(mask, np.array([oct_1 + 19]), np.array([left]))
    assert int(rebated[0]) == left // 2
    assert int(sim.balance[0]) == left - left // 2 > 0
    assert int(sim.carry[0]) > 0  # the interest accrued to the rebate's day, owed on a balance
