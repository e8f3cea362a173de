"""The project's generic dbt data tests, on hand-made tables: each returns exactly its failures.
(dbt builds run them on the warehouse; here the compiled SQL of one use runs on rows made to fail
it.)"""

from model_runner import CATALOG


def test_references_returns_the_key_of_each_row_naming_no_parent(model_runner):
    import duckdb

    con = duckdb.connect()
    con.execute(f"attach ':memory:' as {CATALOG}")
    con.execute(f"use {CATALOG}")
    con.execute("create schema marts")
    con.execute(
        "create table marts.fct_receivable_period as select * from (values "
        "('t1', 'R1', '2016-01', 10.00), ('t1', 'R1', '2016-02', 9.00), "
        "('t1', 'R9', '2016-01', 5.00), ('t1', 'R9', '2016-02', 4.00), "
        "('t2', 'R1', '2016-01', 7.00), (null, 'R1', '2016-01', 1.00)) "
        "as rows(deal_id, receivable_id, collection_period, ending_balance)"
    )
    # the parent's key repeated (no primary key tested here): still one match per child row
    con.execute(
        "create table marts.dim_receivable as select * from (values "
        "('t1', 'R1'), ('t1', 'R1'), ('t2', 'R2'), ('t3', 'R9')) as rows(deal_id, receivable_id)"
    )
    sql = model_runner.data_test("references_fct_receivable_period_deal_id__receivable_id")
    failures = sorted(con.execute(sql).fetchall(), key=str)
    # R9 of t1 (twice: each row), R1 of t2 (t2 has only R2), and the row with no trust
    assert failures == sorted([("t1", "R9"), ("t1", "R9"), ("t2", "R1"), (None, "R1")], key=str)
