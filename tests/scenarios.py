"""Scenario data shaped like the delivered files, loaded into `raw` for the model runner."""

from dagster_project.deal import load_deal
from dagster_project.ingestion import schemas
from dagster_project.ingestion.deal_tables import load_deal_tables
from dagster_project.ingestion.loader import ensure_table
from dagster_project.quality.store import ensure_schema

TAPE_DEFAULTS = {
    "reportingPeriodBeginningLoanBalanceAmount": "0.00",
    "reportingPeriodActualEndBalanceAmount": "0.00",
    "reportingPeriodScheduledPaymentAmount": "300.00",
    "totalActualAmountPaid": "0.00",
    "actualInterestCollectedAmount": "0.00",
    "actualPrincipalCollectedAmount": "0.00",
    "actualOtherCollectedAmount": "0.00",
    "rebateAmount": "0.00",
    "currentDelinquencyStatus": "0",
    "loanStatus": "current",
    "zeroBalanceCode": None,
    "chargedoffPrincipalAmount": "0.00",
    "recoveredAmount": "0.00",
    "liquidationExpenseAmount": "0.00",
    "repossessedIndicator": "false",
    "repossessionDate": None,
    "repurchaseAmount": "0.00",
    "paymentExtendedNumber": "0",
    "extensionGrantedIndicator": "false",
    "obligorBankruptcyIndicator": "false",
    "interestPaidThroughDate": "2015-09-30",
    "loanMaturityDate": "2020-09-15",
    "remainingTermToMaturityNumber": "60",
    "servicerAdvancedAmount": "0.00",
}
SCHEDULE_DEFAULTS = {
    "origination_date": "2015-01-15",
    "first_payment_date": "2015-02-15",
    "maturity_date": "2020-09-15",
    "amount_financed": "20000.00",
    "original_term": "66",
    "remaining_term": "60",
    "scheduled_payment": "300.00",
    "vehicle_new_used": "used",
    "vehicle_model_year": "2012",
    "vehicle_make": "HONDA",
    "obligor_name": "A B",
    "obligor_street_address": "1 MAIN ST",
    "obligor_state": "VA",
    "obligor_credit_score": "700",
    "days_past_due": "0",
    "payments_made": "6",
    "interest_calculation_method": "simple",
    "is_bankrupt": "false",
    "is_repossessed": "false",
    "is_government_obligor": "false",
}


def _insert(con, schema, deal_id: str, scope: str, rows: list[dict]) -> None:
    ensure_table(con, schema)
    if not rows:
        return
    names = schema.names
    columns = ", ".join(f'"{name}"' for name in names)
    casts = ", ".join(f"cast(? as {c.type})" for c in schema.columns)
    keys = ["deal_id", "collection_period"] if schema.per_period else ["deal_id"]
    values = [deal_id, scope] if schema.per_period else [deal_id]
    marks = ", ".join("?" * len(keys))
    con.executemany(
        f"insert into {schema.table} ({', '.join(keys)}, delivery_id, {columns}) "
        f"values ({marks}, ?, {casts})",
        [values + [f"scenario:{scope}"] + [row.get(n) for n in names] for row in rows],
    )


def _record_delivery(con, deal_id: str, kind: str, scope: str, rows: int) -> None:
    con.execute(
        "insert into raw.deliveries values (?, ?, ?, ?, 'scenario', 'scenario', ?, 'loaded', 0, "
        "null, now(), null)",
        [f"{kind}:{deal_id}:{scope}:scenario", deal_id, kind, scope, rows],
    )


def loader(schedule_rows, periods, earnings=None, deal=None):
    """A `load_raw` callable for ModelRunner.run: deal tables, schedule, tapes (recorded in the
    delivery ledger as loaded), earnings."""
    deal = deal or load_deal()

    def load(con):
        load_deal_tables(con, [deal])
        _insert(
            con,
            schemas.RECEIVABLE_SCHEDULE,
            deal.deal_id,
            "receivable_schedule",
            [{**SCHEDULE_DEFAULTS, **row} for row in schedule_rows],
        )
        ensure_table(con, schemas.LOAN_STATUS)
        ensure_table(con, schemas.PAYMENT_TRANSACTIONS)
        for period, status_rows, transaction_rows in periods:
            tape = [{**TAPE_DEFAULTS, **r} for r in status_rows]
            _insert(con, schemas.LOAN_STATUS, deal.deal_id, period, tape)
            _insert(con, schemas.PAYMENT_TRANSACTIONS, deal.deal_id, period, transaction_rows)
            _record_delivery(con, deal.deal_id, "loan_status", period, len(tape))
            _record_delivery(
                con, deal.deal_id, "payment_transactions", period, len(transaction_rows)
            )
        for schema in schemas.MARKET_SCHEMAS:
            ensure_table(con, schema)
        _insert(
            con,
            schemas.TRUST_ACCOUNT_EARNINGS,
            deal.deal_id,
            "trust_account_earnings",
            earnings or [],
        )
        ensure_schema(con)

    return load
