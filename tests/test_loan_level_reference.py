"""The dbt loan-level marts against the plain-Python reference, to the cent."""

import datetime as dt
from decimal import Decimal

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.loan_level import Account, compute, replay


@pytest.fixture(scope="module")
def reference(built_warehouse):
    return compute(built_warehouse["input"])


@pytest.fixture(scope="module")
def warehouse(built_warehouse):
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    yield con
    con.close()


def test_every_receivable_period_matches_the_reference(reference, warehouse):
    rows = warehouse.execute("""
        select receivable_id, collection_period, beginning_balance, ending_balance,
               interest_collected_amount, principal_collected_amount, rebate_principal_amount,
               fees_collected_amount, defaulted_principal_amount, purchase_principal_amount,
               liquidation_proceeds_amount, delinquency_bucket
        from marts.fct_receivable_period""").fetchall()
    assert len(rows) == len(reference.receivables)
    for rid, period, *figures in rows:
        ref = reference.receivables[(rid, period)]
        expected = [
            ref.beginning_balance,
            ref.ending_balance,
            ref.interest,
            ref.principal,
            ref.rebate,
            ref.fees,
            ref.defaulted_principal,
            ref.purchase_principal,
            ref.liquidation,
            ref.bucket,
        ]
        assert figures == expected, (rid, period)


def test_pool_roll_forward_matches_the_reference(reference, warehouse):
    names = list(next(iter(reference.pool.values())).keys())
    rows = warehouse.execute(
        f"select collection_period, {', '.join(names)} from marts.fct_pool_period order by 1"
    ).fetchall()
    assert [r[0] for r in rows] == sorted(reference.pool)
    for period, *figures in rows:
        assert dict(zip(names, figures, strict=True)) == reference.pool[period], period


def test_ending_pool_balance_is_the_sum_of_receivable_balances(warehouse):
    mismatches = warehouse.execute("""
        select pool.collection_period from marts.fct_pool_period as pool
        join (select collection_period, sum(ending_balance) as total
              from marts.fct_receivable_period group by 1) as receivables using (collection_period)
        where pool.ending_pool_balance <> receivables.total
           or pool.ending_pool_balance <> pool.beginning_pool_balance
              - pool.principal_collections_amount - pool.purchase_principal_amount
              - pool.defaulted_receivables_amount""").fetchall()
    assert mismatches == []


def test_generated_servicer_balances_reconcile(warehouse):
    assert (
        warehouse.execute("select count(*) from marts.rpt_balance_reconciliation").fetchone()[0]
        == 0
    )


def test_a_defaulted_receivable_has_zero_balance_from_that_month_end(warehouse):
    rows = warehouse.execute("""
        select count(*) filter (where is_defaulted and ending_balance <> 0),
               count(*) filter (where is_default_period), count(*) filter (where is_purchased
               and is_defaulted)
        from marts.fct_receivable_period""").fetchone()
    assert rows[0] == 0 and rows[1] > 0 and rows[2] == 0


# --- property-based: the SQL Simple Interest replay against the reference --------------------

CUTOFF = dt.date(2015, 9, 30)
KINDS = st.sampled_from(["payment", "payment", "payment", "rebate", "late_fee"])
TRANSACTION = st.tuples(
    st.integers(min_value=0, max_value=400),  # days after the cutoff (odd dates)
    KINDS,
    st.integers(min_value=1, max_value=900_000),  # cents: tiny to full prepayments
)
RECEIVABLE = st.tuples(
    st.integers(min_value=50_000, max_value=6_000_000),  # cutoff balance, cents
    st.integers(min_value=0, max_value=250_000),  # APR in millionths (0-25%)
    st.integers(min_value=0, max_value=45),  # days since the last payment
    st.lists(TRANSACTION, max_size=14),  # late, missed, partial, prepaid
)


@pytest.fixture(scope="module")
def steps_sql(compiled_model):
    return compiled_model("int_receivable__simple_interest_steps")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(RECEIVABLE, min_size=1, max_size=6))
def test_simple_interest_sql_matches_the_reference(steps_sql, receivables):
    con = steps_sql["connect"]()
    schedule, transactions, expected = [], [], {}
    for number, (balance, apr, age, events) in enumerate(receivables):
        rid = f"R{number}"
        apr_decimal = Decimal(apr).scaleb(-6)
        last = CUTOFF - dt.timedelta(days=age)
        schedule.append((rid, apr_decimal, Decimal(balance).scaleb(-2), last))
        rows = [
            (CUTOFF + dt.timedelta(days=offset), kind, Decimal(amount).scaleb(-2))
            for offset, kind, amount in events
        ]
        # one transaction of a kind and amount per day, as a file without duplicate rows
        rows = list(dict.fromkeys(rows))
        transactions += [(rid, day, kind, amount) for day, kind, amount in rows]
        account = Account(apr=apr_decimal, balance=Decimal(balance).scaleb(-2), last_accrual=last)
        expected[rid] = replay(account, rows)
    con.execute("delete from staging.stg_servicer__receivable_schedule")
    con.execute("delete from staging.stg_servicer__payment_transactions")
    con.executemany(
        "insert into staging.stg_servicer__receivable_schedule values (?, ?, ?, ?)", schedule
    )
    if transactions:
        con.executemany(
            "insert into staging.stg_servicer__payment_transactions values (?, '2015-10', ?, ?, ?)",
            transactions,
        )
    result = con.execute(
        f"select receivable_id, step_number, balance_cents from ({steps_sql['sql']}) "
        f"where step_number > 0 order by 1, 2"
    ).fetchall()
    got = {}
    for rid, _, cents in result:
        got.setdefault(rid, []).append(Decimal(cents).scaleb(-2))
    for rid, balances in expected.items():
        assert got.get(rid, []) == balances, rid
