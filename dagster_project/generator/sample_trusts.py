"""Sample trusts for a bigger shelf (`python -m dagster_project.generator --trusts N`): beyond the
shelf's deal files, trusts shaped like 2015-4 issued one quarter apart after it. Each is 2015-4's
deal file with every date moved by whole quarters (the Cutoff Date to a month end, Distribution
and Determination Dates to the 15th and the 9th or the next Business Day) and without the Art. I
first-period interest amounts, which belong to 2015-4's own first accrual period. They are sample
data: named "Sample trust", never a real CarMax trust."""

import datetime as dt
from pathlib import Path

import yaml

from dagster_project.business_calendar import add_months, month_end, next_business_day
from dagster_project.deal import DEFAULT_DEAL_FILE, Deal, load_deal


def _on_day(day: dt.date, months: int, day_of_month: int) -> dt.date:
    moved = add_months(day.replace(day=1), months)
    return next_business_day(moved.replace(day=day_of_month))


def sample_deal_text(quarters: int, template: Path = DEFAULT_DEAL_FILE) -> tuple[str, str]:
    """(deal_id, deal file text) of the sample trust issued `quarters` quarters after the
    template's."""
    raw = yaml.safe_load(template.read_text(encoding="utf-8"))
    months = 3 * quarters
    dates = raw["dates"]
    cutoff = month_end(add_months(dates["cutoff_date"].replace(day=1), months))
    series = f"{cutoff.year + (cutoff.month >= 10)}-{(cutoff.month // 3) % 4 + 1}"
    deal_id = f"sample-{series}"
    raw["trust_name"] = f"Sample trust {series} (shaped like {raw['trust_name']})"
    raw["deal_id"] = deal_id
    dates["cutoff_date"] = cutoff
    dates["closing_date"] = next_business_day(add_months(dates["closing_date"], months))
    dates["first_determination_date"] = _on_day(
        dates["first_determination_date"], months, dates["determination_day_of_month"]
    )
    distribution_day = dates["distribution_day_of_month"]
    for key in ("first_distribution_date", "final_scheduled_maturity_date"):
        dates[key] = _on_day(dates[key], months, distribution_day)
    eligibility = raw.get("eligibility") or {}
    if "originated_after" in eligibility:
        eligibility["originated_after"] = add_months(eligibility["originated_after"], months)
    for note_class in raw["classes"]:
        note_class.pop("first_period_interest", None)
        note_class["final_distribution_date"] = _on_day(
            note_class["final_distribution_date"], months, distribution_day
        )
    header = (
        f"# {raw['trust_name']}: sample data written by `python -m dagster_project.generator "
        f"--trusts N` from {template.name}, every date {months} months later.\n"
    )
    return deal_id, header + yaml.safe_dump(raw, sort_keys=False, allow_unicode=True)


def shelf_of(count: int, shelf: list[Deal], folder: Path) -> list[Deal]:
    """`count` trusts: 2015-4 first, then the shelf's other deal files by Cutoff Date, then sample
    trusts a quarter apart; every deal file used is written to `folder` (run the pipeline with
    CAOT_DEALS_DIR pointing there)."""
    sample = next(d for d in shelf if d.path.resolve() == DEFAULT_DEAL_FILE.resolve())
    ordered = [sample] + [d for d in shelf if d is not sample]
    folder.mkdir(parents=True, exist_ok=True)
    chosen = []
    for deal in ordered[:count]:
        path = folder / deal.path.name
        path.write_text(deal.path.read_text(encoding="utf-8"), encoding="utf-8")
        chosen.append(load_deal(path))
    for quarters in range(1, count - len(chosen) + 1):
        deal_id, text = sample_deal_text(quarters)
        path = folder / f"{deal_id.replace('-', '_')}.yaml"
        path.write_text(text, encoding="utf-8")
        chosen.append(load_deal(path))
    return chosen
