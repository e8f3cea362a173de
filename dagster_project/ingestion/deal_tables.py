"""The shelf's deal files and payment calendars as warehouse tables, so dbt reads the same terms.

raw.deals has one row per trust with a typed column per term; raw.deal_classes one row per class;
raw.payment_calendar one row per Distribution Date; raw.certificate_layout one row per line of
the trust's Monthly Servicer's Certificate. Every row carries its deal_id.
"""

import duckdb

from dagster_project.business_calendar import payment_periods
from dagster_project.certificate_layout import certificate_layout
from dagster_project.deal import Deal
from dagster_project.ingestion.holds import replace_holds
from dagster_project.warehouse import insert_rows, transaction

COLUMNS = {
    "deals": """
        deal_id varchar, trust_name varchar, servicer_name varchar, cutoff_date date,
        closing_date date, first_determination_date date, first_distribution_date date,
        final_scheduled_maturity_date date, initial_pool_balance decimal(18, 2),
        initial_note_balance decimal(18, 2), servicing_rate decimal(12, 9),
        successor_transition_cap decimal(18, 2), defaulted_days_past_due integer,
        repurchase_cure_days integer, required_reserve_amount decimal(18, 2),
        initial_reserve_deposit decimal(18, 2), overcollateralization_percent decimal(12, 9),
        overcollateralization_base varchar, overcollateralization_floor_percent decimal(12, 9),
        clean_up_call_percent decimal(12, 9), tangible_net_worth_minimum decimal(18, 2),
        floating_rate_index varchar, has_receivable_count_line boolean, deal_file varchar,
        deal_file_sha256 varchar""",
    "deal_classes": """
        deal_id varchar, class_id varchar, label varchar, class_order integer, tier varchar,
        principal_order integer, initial_balance decimal(18, 2), rate_type varchar,
        rate decimal(12, 9), spread decimal(12, 9), day_count varchar,
        first_period_interest decimal(18, 2), final_distribution_date date""",
    "payment_calendar": """
        deal_id varchar, period_number integer, collection_period varchar,
        collection_period_start date, collection_period_end date, determination_date date,
        distribution_date date, record_date date, accrual_start date, actual_days integer,
        thirty_360_start date, thirty_360_days integer, related_fiscal_quarter_end date""",
    "certificate_layout": """
        deal_id varchar, line varchar, key varchar, label varchar, kind varchar,
        line_order integer, section varchar, group_label varchar, payment_step varchar""",
}


def deal_table_rows(deal: Deal) -> dict[str, list[tuple]]:
    """The rows of each deal table for one trust, in table order."""
    return {
        "deals": [tuple(deal.table_row().values())],
        "deal_classes": [
            (
                deal.deal_id,
                c.class_id,
                c.label,
                i + 1,
                c.tier,
                c.principal_order,
                c.initial_balance,
                c.rate_type,
                c.rate,
                c.spread,
                c.day_count,
                c.first_period_interest,
                c.final_distribution_date,
            )
            for i, c in enumerate(deal.classes)
        ],
        "payment_calendar": [
            (
                deal.deal_id,
                p.period_number,
                p.collection_period,
                p.collection_period_start,
                p.collection_period_end,
                p.determination_date,
                p.distribution_date,
                p.record_date,
                p.accrual_start,
                p.actual_days,
                p.thirty_360_start,
                p.thirty_360_days,
                p.related_fiscal_quarter_end,
            )
            for p in payment_periods(deal)
        ],
        "certificate_layout": [
            (
                deal.deal_id,
                x.line,
                x.key,
                x.label,
                x.kind,
                x.line_order,
                x.section,
                x.group_label,
                x.payment_step,
            )
            for x in certificate_layout(deal)
        ],
    }


def ensure_deal_tables(con) -> None:
    con.execute("create schema if not exists raw")
    for table, columns in COLUMNS.items():
        con.execute(f"create table if not exists raw.{table} ({columns})")


def load_deal_tables(con, deals: list[Deal]) -> dict[str, int]:
    """Replace the rows of `deals` in every deal table (other trusts' rows stay)."""
    counts = dict.fromkeys(COLUMNS, 0)
    with transaction(con):
        ensure_deal_tables(con)
        for deal in deals:
            for table, values in deal_table_rows(deal).items():
                con.execute(f"delete from raw.{table} where deal_id = ?", [deal.deal_id])
                insert_rows(con, f"raw.{table}", values)
                counts[table] += len(values)
    return counts


def loaded_deal_file(con, deal_id: str) -> tuple[str, str] | None:
    """The deal file name and SHA-256 loaded for a trust (None before its first load)."""
    try:
        return con.execute(
            "select deal_file, deal_file_sha256 from raw.deals where deal_id = ?", [deal_id]
        ).fetchone()
    except duckdb.CatalogException:
        return None


def term_changes(con, deal: Deal) -> list[str]:
    """What differs between the trust's loaded deal tables and its deal file now ("deal_classes:
    row for class D removed", "deals.servicing_rate: 0.01 -> 0.02"); empty when they agree."""
    changes = []
    rows = deal_table_rows(deal)
    try:
        loaded = con.execute("select * from raw.deals where deal_id = ?", [deal.deal_id]).fetchone()
    except duckdb.CatalogException:
        return []
    if loaded is None:
        return []
    names = list(deal.table_row())
    for name, old, new in zip(names, loaded, rows["deals"][0], strict=True):
        if name not in ("deal_file", "deal_file_sha256") and old != new:
            changes.append(f"deals.{name}: {old} -> {new}")
    old_classes = {
        r[1]: r
        for r in con.execute(
            "select * from raw.deal_classes where deal_id = ?", [deal.deal_id]
        ).fetchall()
    }
    new_classes = {r[1]: r for r in rows["deal_classes"]}
    for class_id in sorted(set(old_classes) | set(new_classes)):
        if class_id not in new_classes:
            changes.append(f"deal_classes: class {class_id} removed")
        elif class_id not in old_classes:
            changes.append(f"deal_classes: class {class_id} added")
        elif old_classes[class_id] != new_classes[class_id]:
            changes.append(f"deal_classes: class {class_id} changed")
    return changes


APPLY_CHANGES = "python -m dagster_project.pipeline --rebuild --accept-deal-changes"


def hold_deal_files(con, shelf: list[Deal], changed: dict[str, list[str]], now) -> dict[str, str]:
    """The trusts whose deal file changed since their certificates were computed (`changed`: the
    changes of each, term_changes), each with why. Their changes are not applied silently: the terms
    loaded before stand in the warehouse's deal tables (what dbt computes from; ingestion validates
    the trust's deliveries against its file as it is), and the certificate gate withholds each such
    trust's certificates (quality/runs.py trust_holds) until a run accepts the change
    (APPLY_CHANGES) or the file is as loaded again; the other trusts are not affected.
    raw.deal_file_holds holds them, replaced whole at each call."""
    paths = {deal.deal_id: deal.path for deal in shelf}
    holds = {
        deal_id: f"the trust's deal file ({paths[deal_id]}) changed since its certificates were "
        f"computed and is not applied ({', '.join(found)}): to apply it and recompute the "
        f"trust, {APPLY_CHANGES}"
        for deal_id, found in changed.items()
    }
    replace_holds(con, "deal_file_holds", {d: (paths[d], why) for d, why in holds.items()}, now)
    return holds
