"""The analyst guide's SQL runs on the warehouse; its lineage table adds up to the certificate."""

import re
from pathlib import Path

import duckdb
import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "analyst_guide.md"
BLOCKS = re.findall(r"```sql\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)

# docs/analyst_guide.md "The receivables behind one certificate line": line -> summed expression
LINEAGE = {
    "2": "principal_collected_amount + rebate_principal_amount",
    "3": "purchase_principal_amount",
    "4": "defaulted_principal_amount",
    "5": "ending_balance",
    "17a": "interest_collected_amount",
    "17b": "liquidation_interest_amount",
    "17c": "purchase_interest_amount",
    "18b": "liquidation_principal_amount",
}


@pytest.fixture(scope="module")
def warehouse(built_warehouse):
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    yield con
    con.close()


def test_the_guide_has_worked_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("sql", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_sql_example_of_the_guide_runs_and_returns_rows(warehouse, sql):
    rows = warehouse.execute(sql).fetchall()
    assert rows, sql


def test_the_proof_query_ties_line_4_to_its_receivables(warehouse):
    proof = next(block for block in BLOCKS if "on_the_certificate" in block)
    from_receivables, on_the_certificate = warehouse.execute(proof).fetchone()
    assert from_receivables == on_the_certificate


def test_every_pool_line_is_the_sum_of_its_receivable_rows(warehouse):
    for line, expression in LINEAGE.items():
        wrong = warehouse.execute(
            f"""
            with sums as (
                select deal_id, distribution_date, sum({expression}) as total
                from marts.fct_receivable_period group by all
            )
            select certificate.distribution_date, certificate.amount, sums.total
            from marts.rpt_servicer_certificate as certificate
            left join sums using (deal_id, distribution_date)
            where certificate.line = ? and certificate.amount is distinct from sums.total
            """,
            [line],
        ).fetchall()
        assert wrong == [], line
    # lines 21 and 27: the advances model's receivable rows (4.4, 4.2)
    for line, expression in (
        ("21", "simple_interest_advance_amount - reimbursement_retained_amount"),
        ("27", "unreimbursed_servicer_advance_amount"),
    ):
        wrong = warehouse.execute(
            f"""
            with sums as (
                select advances.deal_id, calendar.distribution_date, sum({expression}) as total
                from intermediate.int_receivable_period__simple_interest_advances as advances
                inner join staging.stg_deal__payment_calendar as calendar
                    using (deal_id, collection_period)
                group by all
            )
            select certificate.distribution_date, certificate.amount, sums.total
            from marts.rpt_servicer_certificate as certificate
            left join sums using (deal_id, distribution_date)
            where certificate.line = ? and certificate.amount <> coalesce(sums.total, 0)
            """,
            [line],
        ).fetchall()
        assert wrong == [], line
    assert warehouse.execute(
        "select count(*) from marts.rpt_servicer_certificate where line = '21' and amount < 0"
    ).fetchone()[0], "the small deal's advances are reimbursed in later periods"
    # line 75: the receivables' net losses summed, the excess if any (Art. I "Net Losses")
    wrong = warehouse.execute(
        """
        with sums as (
            select deal_id, distribution_date, greatest(sum(net_loss_amount), 0) as total
            from marts.fct_receivable_period group by all
        )
        select certificate.distribution_date from marts.rpt_servicer_certificate as certificate
        left join sums using (deal_id, distribution_date)
        where certificate.line = '75' and certificate.amount is distinct from sums.total
        """
    ).fetchall()
    assert wrong == []
    orphans = warehouse.execute(
        "select count(*) from marts.fct_receivable_period as period "
        "left join raw.deliveries as delivery using (delivery_id) where delivery.sha256 is null"
    ).fetchone()[0]
    assert orphans == 0  # every receivable row names the delivery file it came from


def test_the_sql_prompt_prints_every_row_asked_for_and_exports_csv(
    built_warehouse, tmp_path, capsys
):
    import csv

    from dagster_project.sql import main

    warehouse = built_warehouse["published"]
    query = (
        "select distribution_date, line, value from marts.rpt_servicer_certificate "
        "where line = '5' order by 1"
    )
    assert main([str(warehouse), "-c", query, "--max-rows", "0"]) == 0
    printed = capsys.readouterr().out
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute(query).fetchall()
    con.close()
    assert len(rows) > 40
    assert str(rows[-1][0]) in printed and str(rows[40][0]) in printed  # past the default 40
    out = tmp_path / "pool.csv"
    assert main([str(warehouse), "-c", query, "--csv", str(out)]) == 0
    with out.open(newline="") as handle:
        exported = list(csv.DictReader(handle))
    assert len(exported) == len(rows)
    assert exported[0]["value"] == str(rows[0][2])  # the exact DECIMAL text
    assert main([str(warehouse), "-c", "select nonsense"]) == 1
