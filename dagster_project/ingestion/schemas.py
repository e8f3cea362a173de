"""The columns each delivered file must have, their warehouse types and their checks.

Loan-level tape columns use the SEC Regulation AB Schedule AL (Item 3) names where one fits
(see docs/tape_fields.md); the few fields Schedule AL lacks are named in the same style.
"""

from dataclasses import dataclass

MONEY = "decimal(18, 2)"
SHELF = "shelf"  # the deal_id of files that belong to the whole shelf, not to one trust
# no single receivable's amount reaches $10 million: larger is absurd (unless a trust's whole pool
# is larger: validation.absurd_bound)
MAX_AMOUNT = "10000000.00"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    required: bool = True  # a value must be present in every row
    nonnegative: bool = False  # money and counts that cannot be negative
    allowed: tuple[str, ...] = ()  # accepted values, if a code list
    bounded: bool = False  # money of one receivable: above ingestion's absurd bound is absurd
    in_every_file: bool = True  # False: a format may leave the column out (it reads as NULL)
    omissible: bool = False  # EX-102 leaves it out (where it does not apply): NULL, never 0
    signed_in_ex102: bool = False  # EX-102 reports it with its sign (ingestion/ex102.py)


@dataclass(frozen=True)
class FileSchema:
    kind: str
    table: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]  # duplicate rows on this key are rejected
    id_column: str | None = None  # must name a receivable of the schedule
    period_columns: tuple[str, str] | None = None  # (begin, end) must equal the partition's
    date_in_period: str | None = None  # each date must fall inside the period
    allow_empty: bool = False  # a header and no rows is a valid file
    per_trust: bool = True  # False: one file for the whole shelf (deal_id SHELF)
    per_period: bool = False  # a monthly tape: its rows are keyed by Collection Period
    optional: bool = False  # a trust may deliver none: no file, no rows (and no finding)
    source_column: str | None = None  # 'ex102' in it: the row was converted from an EX-102 filing

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def money(
    name: str, required: bool = True, omissible: bool = False, signed_in_ex102: bool = False
) -> Column:
    return Column(
        name,
        MONEY,
        required=required,
        nonnegative=True,
        bounded=True,
        omissible=omissible,
        signed_in_ex102=signed_in_ex102,
    )


LOAN_STATUSES = (
    "current",
    "delinquent",
    "repossessed",
    "paid_in_full",
    "charged_off",
    "liquidated",
    "purchased",
)
TRANSACTION_TYPES = ("payment", "rebate", "late_fee", "liquidation_proceeds", "liquidation_expense")

RECEIVABLE_SCHEDULE = FileSchema(
    kind="receivable_schedule",
    table="raw.receivable_schedule",
    key=("receivable_id",),
    columns=(
        Column("receivable_id", "varchar"),
        Column("origination_date", "date"),
        Column("first_payment_date", "date"),
        Column("maturity_date", "date"),
        # omissible: a schedule built from an EX-102 filing (ingestion/ex102.py schedule_row)
        # cannot give what no public field reports
        Column("last_payment_date", "date", omissible=True),
        money("amount_financed"),
        Column("apr", "decimal(8, 6)", nonnegative=True),
        Column("original_term", "integer", nonnegative=True),
        Column("remaining_term", "integer", nonnegative=True),
        money("scheduled_payment"),
        money("principal_balance"),
        Column("vehicle_new_used", "varchar", allowed=("new", "used")),
        Column("vehicle_model_year", "integer"),
        Column("vehicle_make", "varchar", required=False),
        Column("obligor_name", "varchar", required=False),
        Column("obligor_street_address", "varchar", required=False),
        Column("obligor_state", "varchar"),
        # a bureau score can be fractional (an average of two: CarMax files 800.5)
        Column("obligor_credit_score", "decimal(6, 1)", required=False),
        Column("days_past_due", "integer", nonnegative=True, omissible=True),
        Column("payments_made", "integer", nonnegative=True, omissible=True),
        Column("interest_calculation_method", "varchar"),
        Column("is_bankrupt", "boolean", omissible=True),
        Column("is_repossessed", "boolean", omissible=True),
        Column("is_government_obligor", "boolean", omissible=True),
        Column("source_format", "varchar", required=False, in_every_file=False),
    ),
    source_column="source_format",
)

LOAN_STATUS = FileSchema(
    kind="loan_status",
    table="raw.loan_status",
    key=("assetNumber",),
    id_column="assetNumber",
    source_column="sourceFormat",
    period_columns=("reportingPeriodBeginningDate", "reportingPeriodEndingDate"),
    # a tape with no rows is a delivery once no receivable is outstanding (recoveries may still
    # flow); while any is, the missing receivables are findings (validation.py)
    allow_empty=True,
    per_period=True,
    columns=(
        Column("assetNumber", "varchar"),
        Column("reportingPeriodBeginningDate", "date"),
        Column("reportingPeriodEndingDate", "date"),
        money("reportingPeriodBeginningLoanBalanceAmount", signed_in_ex102=True),
        money("reportingPeriodActualEndBalanceAmount", signed_in_ex102=True),
        money("reportingPeriodScheduledPaymentAmount", omissible=True),
        money("totalActualAmountPaid", omissible=True),
        money("actualInterestCollectedAmount", omissible=True),
        money("actualPrincipalCollectedAmount", omissible=True),
        money("actualOtherCollectedAmount", omissible=True),
        money("rebateAmount", omissible=True, signed_in_ex102=True),
        Column("currentDelinquencyStatus", "integer", nonnegative=True, omissible=True),
        Column("loanStatus", "varchar", allowed=LOAN_STATUSES),
        Column(
            "zeroBalanceCode", "varchar", required=False, allowed=("1", "2", "3", "4", "5", "99")
        ),
        money("chargedoffPrincipalAmount", omissible=True),
        money("recoveredAmount", omissible=True, signed_in_ex102=True),
        money("liquidationExpenseAmount", omissible=True),
        Column("repossessedIndicator", "boolean", omissible=True),
        Column("repossessionDate", "date", required=False),
        money("repurchaseAmount", omissible=True),
        Column("paymentExtendedNumber", "integer", nonnegative=True, omissible=True),
        Column("extensionGrantedIndicator", "boolean", omissible=True),
        Column("obligorBankruptcyIndicator", "boolean", omissible=True),
        Column("interestPaidThroughDate", "date"),
        Column("loanMaturityDate", "date", omissible=True),
        Column("remainingTermToMaturityNumber", "integer", nonnegative=True, omissible=True),
        money("servicerAdvancedAmount", omissible=True),
        # EX-102 deliveries only (ingestion/ex102.py); a CSV tape may leave them out
        *(
            Column(name, kind, required=False, in_every_file=False)
            for name, kind in (
                ("sourceFormat", "varchar"),
                ("zeroBalanceCodes", "varchar"),
                ("zeroBalanceEffectiveDate", "date"),
                ("modificationTypeCodes", "varchar"),
                ("subventedCodes", "varchar"),
                ("repossessedProceedsAmount", "decimal(18, 2)"),
            )
        ),
    ),
)

PAYMENT_TRANSACTIONS = FileSchema(
    kind="payment_transactions",
    table="raw.payment_transactions",
    key=("assetNumber", "transactionDate", "transactionType", "transactionAmount"),
    id_column="assetNumber",
    date_in_period="transactionDate",
    allow_empty=True,  # a period can pass without a single transaction
    per_period=True,
    columns=(
        Column("assetNumber", "varchar"),
        Column("transactionDate", "date"),
        Column("transactionType", "varchar", allowed=TRANSACTION_TYPES),
        money("transactionAmount"),
    ),
)

TAPE_SCHEMAS = (LOAN_STATUS, PAYMENT_TRANSACTIONS)

INDEX_RATES = FileSchema(
    kind="index_rates",
    table="raw.index_rates",
    key=("accrual_period_start",),
    columns=(
        Column("accrual_period_start", "date"),
        Column("accrual_period_end", "date"),
        Column("distribution_date", "date"),
        # the deal's floating index (1-month LIBOR, SOFR) for the accrual period, as a fraction
        Column("index_rate", "decimal(12, 9)", nonnegative=True),
    ),
)

TANGIBLE_NET_WORTH = FileSchema(
    kind="tangible_net_worth",
    table="raw.tangible_net_worth",
    key=("fiscal_quarter_end",),
    per_trust=False,  # the servicer's parent's figure, one file for the shelf
    # a shelf of trusts built from public filings has none: lines 79-80 (a covenant of the
    # servicer, not an amount paid) then print empty
    optional=True,
    columns=(
        Column("fiscal_quarter_end", "date"),
        Column("consolidated_tangible_net_worth", MONEY),
    ),
)

TRUST_ACCOUNT_EARNINGS = FileSchema(
    kind="trust_account_earnings",
    table="raw.trust_account_earnings",
    key=("distribution_date",),
    columns=(
        Column("distribution_date", "date"),
        money("collection_account_interest"),
        money("reserve_account_investment_earnings"),
    ),
)

# Files delivered once and replaced whole when they change: per trust, or one for the shelf.
# The servicer's decisions on the auditor's exceptions (dagster_project/audit/exceptions.py): a
# waiver with its reason and who decided, or a reopening; the file holds every decision so far.
EXCEPTION_DECISIONS = FileSchema(
    kind="exception_decisions",
    table="raw.exception_decisions",
    key=("exception_id", "decided_on", "decision"),
    allow_empty=True,
    optional=True,
    columns=(
        Column("exception_id", "varchar"),
        Column("decision", "varchar", allowed=("waived", "reopened")),
        Column("decided_on", "date"),
        Column("decided_by", "varchar"),
        Column("reason", "varchar"),
    ),
)

MARKET_SCHEMAS = (INDEX_RATES, TANGIBLE_NET_WORTH, TRUST_ACCOUNT_EARNINGS, EXCEPTION_DECISIONS)
