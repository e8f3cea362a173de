import datetime as dt
import hashlib
import json
from decimal import Decimal

import numpy as np
import pytest
from conftest import DEAL_ID

from dagster_project.deal import load_deal
from dagster_project.generator.__main__ import generate
from dagster_project.generator.calibration import calibration
from dagster_project.generator.schedule import BREACH_KINDS, BREACHES_PER_KIND, build_schedule


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
    assert first["periods"] == second["periods"]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    other = generate(tmp_path / "c", receivables=300, seed=12, progress=False)
    assert other["seed"] == 12 and _digest(tmp_path / "c") != _digest(tmp_path / "a")


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
