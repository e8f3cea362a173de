"""The deal file and the payment calendar as warehouse tables, so dbt reads the same terms."""

import duckdb

from dagster_project.business_calendar import payment_periods
from dagster_project.certificate_layout import certificate_layout
from dagster_project.deal import Deal
from dagster_project.warehouse import transaction

DDL = """
create schema if not exists raw;
create or replace table raw.deal_terms (term varchar, value varchar, section varchar);
create or replace table raw.deal_classes (
    class_id varchar, label varchar, class_order integer, tier varchar, principal_order integer,
    initial_balance decimal(18, 2), rate_type varchar, rate decimal(12, 9), spread decimal(12, 9),
    day_count varchar, first_period_interest decimal(18, 2), final_distribution_date date
);
create or replace table raw.payment_calendar (
    period_number integer, collection_period varchar, collection_period_start date,
    collection_period_end date, determination_date date, distribution_date date, record_date date,
    accrual_start date, actual_days integer, thirty_360_start date, thirty_360_days integer,
    related_fiscal_quarter_end date
);
create or replace table raw.certificate_layout (
    line varchar, key varchar, label varchar, kind varchar, line_order integer, section varchar
);
"""


def deal_table_rows(deal: Deal) -> dict[str, list[tuple]]:
    """The rows of each deal table, in table order."""
    return {
        "deal_terms": [tuple(row) for row in deal.term_rows()],
        "deal_classes": [
            (
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
            (x.line, x.key, x.label, x.kind, x.line_order, x.section)
            for x in certificate_layout(deal)
        ],
    }


def load_deal_tables(con, deal: Deal) -> dict[str, int]:
    rows = deal_table_rows(deal)
    with transaction(con):
        con.execute(DDL)
        for table, values in rows.items():
            marks = ", ".join("?" * len(values[0]))
            con.executemany(f"insert into raw.{table} values ({marks})", values)
    return {table: len(values) for table, values in rows.items()}


def deal_tables_current(con, deal: Deal) -> bool:
    """Whether the warehouse's deal tables hold exactly what the deal file gives now (numbers
    compared by value: DECIMAL columns come back with their scale's trailing zeros)."""
    try:
        return all(
            con.execute(f"select * from raw.{table}").fetchall() == values
            for table, values in deal_table_rows(deal).items()
        )
    except duckdb.CatalogException:  # never loaded
        return False
