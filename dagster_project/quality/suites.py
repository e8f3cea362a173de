"""The Great Expectations suites, built from the deal file: one suite per subject.

Every expectation carries in its `meta` the representation (Section 2.3) or servicing criterion
(Regulation AB Item 1122(d), Exhibit D) it enforces, the rule in words with its bound, and whether
a failure is `blocking`:

- receivable_schedule_receivables: one row per receivable of the Receivable Schedule (2.3(a)-(z)).
  Failures are breaches for the register and 2.4 repurchase, not data errors: not blocking.
- receivable_schedule_pool: one row for the pool at the Cutoff Date (2.3(s), (v), the cutoff Pool
  Balance). The cutoff Pool Balance must equal the deal file's: blocking.
- servicing_criteria: one row per Collection Period (marts.rpt_servicing_criteria); each column is
  zero when the period complies. A failure withholds the period's certificate: blocking.

Great Expectations is imported inside the functions (it costs about 3 s to import; STACK.md).
Bounds are exact integers (cents, millionths, days) where money or rates are compared.
"""

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

from dagster_project.deal import Deal, DealFileError
from dagster_project.money import decimal_to_cents

STATES = [
    "AL",
    "AK",
    "AZ",
    "AR",
    "CA",
    "CO",
    "CT",
    "DE",
    "DC",
    "FL",
    "GA",
    "HI",
    "ID",
    "IL",
    "IN",
    "IA",
    "KS",
    "KY",
    "LA",
    "ME",
    "MD",
    "MA",
    "MI",
    "MN",
    "MS",
    "MO",
    "MT",
    "NE",
    "NV",
    "NH",
    "NJ",
    "NM",
    "NY",
    "NC",
    "ND",
    "OH",
    "OK",
    "OR",
    "PA",
    "RI",
    "SC",
    "SD",
    "TN",
    "TX",
    "UT",
    "VT",
    "VA",
    "WA",
    "WV",
    "WI",
    "WY",
]  # Art. I "State": the 50 States and the District of Columbia


@dataclass(frozen=True)
class Rule:
    """One expectation: the GE expectation class, its arguments and what it enforces."""

    representation: str  # the clause it enforces, e.g. "2.3(q)" or "1122(d)(4)(v)"
    expectation: str  # Great Expectations class name
    column: str
    kwargs: dict
    rule: str  # the rule in words, with its bound
    blocking: bool = False
    also: tuple[str, ...] = ()  # other clauses the same expectation tests
    display: str = "plain"  # how the register prints an observed value: cents, apr, plain
    tolerance: str = ""  # the stated tolerance and why

    @property
    def name(self) -> str:
        return f"{self.expectation}({self.column})"


@dataclass(frozen=True)
class Suite:
    name: str
    subject: str
    id_column: str  # identifies the offending rows (receivable or Collection Period)
    rules: tuple[Rule, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class EligibilityTerms:
    """The deal file's Section 2.3 bounds and the suites' tolerances (`eligibility:`)."""

    originated_after: dt.date
    min_original_term: int
    max_original_term: int
    min_remaining_term: int
    max_remaining_term: int
    min_principal_balance: Decimal
    max_apr: Decimal
    max_days_past_due: int
    min_payments_made: int
    level_payment_tolerance: Decimal
    new_vehicle_share_tolerance: Decimal
    remaining_term_tolerance: Decimal

    @classmethod
    def from_deal(cls, deal: Deal) -> "EligibilityTerms":
        """The terms as the deal file's reader typed them (deal.py ELIGIBILITY); every one is
        needed here."""
        for name in cls.__annotations__:
            if name not in deal.eligibility:
                raise DealFileError(f"{deal.path}: missing required field 'eligibility.{name}'")
        return cls(**{name: deal.eligibility[name] for name in cls.__annotations__})


def _between(column, low=None, high=None) -> dict:
    kwargs = {"column": column}
    if low is not None:
        kwargs["min_value"] = low
    if high is not None:
        kwargs["max_value"] = high
    return kwargs


# Observed columns a Receivable Schedule built from an SEC EX-102 filing cannot give (no public
# field reports them as of the Cutoff Date, or issuers file them by their own convention): their
# rules are left out of such a trust's suite, and the auditor report shows the representation as
# not testable from public data, with this reason (docs/public_filings.md).
NOT_IN_PUBLIC_DATA = {
    "payment_difference_cents": "the scheduled payment includes the first period's odd days of "
    "interest, and a filing gives the origination month, not its day",
    "is_repossessed": "a filing reports repossession at its period end, not at the Cutoff Date",
    "payments_made": "no public field counts the payments made by the Cutoff Date",
    "is_government_obligor": "no public field identifies a government obligor",
    "days_past_due": "a filing reports delinquency at its period end, not at the Cutoff Date",
    "is_bankrupt": "no public field reports an obligor's bankruptcy",
    "maturity_difference_months": "issuers file loanMaturityDate by their own convention "
    "(CarMax: the origination month plus the original term, or one month less)",
}


def schedule_receivable_suite(deal: Deal, public_filings: bool = False) -> Suite:
    """The Section 2.3 rules on each receivable of the schedule; `public_filings`: the schedule
    was built from an EX-102 filing, so the rules on NOT_IN_PUBLIC_DATA are left out."""
    e = EligibilityTerms.from_deal(deal)
    tolerance = decimal_to_cents(e.level_payment_tolerance)
    after = e.originated_after + dt.timedelta(days=1)
    rules = (
        Rule(
            "2.3(a)(iii)",
            "ExpectColumnValuesToBeBetween",
            "payment_difference_cents",
            _between("payment_difference_cents", -tolerance, tolerance),
            f"scheduled payment equals the level payment that amortises the Amount Financed over "
            f"the original term at the APR, within ${e.level_payment_tolerance}",
            display="cents",
            tolerance=f"±${e.level_payment_tolerance}: the contract rounds its payment to the cent "
            "once; the recomputation evaluates the annuity factor in binary floating point, so an "
            "honest contract differs by at most a cent.",
        ),
        Rule(
            "2.3(a)(vi)",
            "ExpectColumnValuesToBeInSet",
            "is_repossessed",
            {"column": "is_repossessed", "value_set": [False]},
            "vehicle not repossessed as of the Cutoff Date",
        ),
        Rule(
            "2.3(a)(vii)",
            "ExpectColumnValuesToBeInSet",
            "interest_calculation_method",
            {"column": "interest_calculation_method", "value_set": ["simple"]},
            "a Simple Interest Receivable",
            also=("2.3(y)",),
        ),
        Rule(
            "2.3(a)(viii)",
            "ExpectColumnValuesToBeBetween",
            "payments_made",
            _between("payments_made", e.min_payments_made),
            f"at least {e.min_payments_made} payment made by the Cutoff Date",
        ),
        Rule(
            "2.3(a)(ix)",
            "ExpectColumnValuesToBeInSet",
            "obligor_state",
            {"column": "obligor_state", "value_set": list(STATES)},
            "obligor's mailing address in one of the 50 States or the District of Columbia",
        ),
        Rule(
            "2.3(e)",
            "ExpectColumnValuesToBeInSet",
            "is_government_obligor",
            {"column": "is_government_obligor", "value_set": [False]},
            "not due from the United States, a State or an agency of either",
        ),
        Rule(
            "2.3(k)",
            "ExpectColumnValuesToBeBetween",
            "days_past_due",
            _between("days_past_due", 0, e.max_days_past_due),
            f"no payment more than {e.max_days_past_due} days past due at the Cutoff Date",
            also=("2.3(z)",),
        ),
        Rule(
            "2.3(q)",
            "ExpectColumnValuesToBeBetween",
            "principal_balance_cents",
            _between("principal_balance_cents", decimal_to_cents(e.min_principal_balance)),
            f"Principal Balance at the Cutoff Date at least ${e.min_principal_balance}",
            display="cents",
        ),
        Rule(
            "2.3(r)",
            "ExpectColumnValuesToBeInSet",
            "is_bankrupt",
            {"column": "is_bankrupt", "value_set": [False]},
            "obligor not in bankruptcy at the Cutoff Date",
        ),
        Rule(
            "2.3(t)",
            "ExpectColumnValuesToBeBetween",
            "origination_date",
            _between("origination_date", dt.datetime.combine(after, dt.time())),
            f"originated after {e.originated_after}",
            display="date",
        ),
        Rule(
            "2.3(u)",
            "ExpectColumnValuesToBeBetween",
            "original_term",
            _between("original_term", e.min_original_term, e.max_original_term),
            f"original term {e.min_original_term}-{e.max_original_term} months",
        ),
        Rule(
            "2.3(u)",
            "ExpectColumnValuesToBeBetween",
            "remaining_term",
            _between("remaining_term", e.min_remaining_term, e.max_remaining_term),
            f"remaining term {e.min_remaining_term}-{e.max_remaining_term} months at the cutoff",
        ),
        Rule(
            "2.3(w)",
            "ExpectColumnValuesToBeBetween",
            "apr_millionths",
            _between("apr_millionths", 0, int(e.max_apr * 1_000_000)),
            f"APR at most {e.max_apr * 100:.2f}%",
            display="apr",
        ),
        Rule(
            "2.3(p)",
            "ExpectColumnValuesToBeUnique",
            "receivable_id",
            {"column": "receivable_id"},
            "each contract listed once in the Receivable Schedule",
            also=("2.3(b)",),
        ),
        Rule(
            "2.3(b)",
            "ExpectColumnValuesToBeBetween",
            "maturity_difference_months",
            _between("maturity_difference_months", 0, 0),
            "maturity date is the first payment date plus the original term less one month",
        ),
        Rule(
            "2.3(b)",
            "ExpectColumnValuesToBeBetween",
            "balance_over_amount_financed_cents",
            _between("balance_over_amount_financed_cents", None, 0),
            "Principal Balance not above the Amount Financed",
            display="cents",
        ),
    )
    required = [
        "receivable_id",
        "origination_date",
        "first_payment_date",
        "maturity_date",
        "amount_financed_cents",
        "apr_millionths",
        "original_term",
        "remaining_term",
        "scheduled_payment_cents",
        "principal_balance_cents",
        "obligor_state",
    ]
    completeness = tuple(
        Rule(
            "2.3(b)",
            "ExpectColumnValuesToNotBeNull",
            column,
            {"column": column},
            f"{column} recorded for every receivable",
        )
        for column in required
    )
    if public_filings:
        rules = tuple(r for r in rules if r.column not in NOT_IN_PUBLIC_DATA)
    return Suite(
        f"{deal.deal_id}.receivable_schedule_receivables",
        f"Receivable Schedule of {deal.trust_name}, one row per receivable, as of the Cutoff Date",
        "receivable_id",
        rules + completeness,
    )


def not_testable_from_filings(deal: Deal) -> dict[str, list[str]]:
    """Representation id -> why the public filings cannot test it, for each rule left out of a
    schedule built from an EX-102 filing (a representation some of whose rules remain is partly
    testable)."""
    reasons: dict[str, list[str]] = {}
    for rule in schedule_receivable_suite(deal).rules:
        if rule.column in NOT_IN_PUBLIC_DATA:
            for clause in (rule.representation, *rule.also):
                reasons.setdefault(clause, []).append(NOT_IN_PUBLIC_DATA[rule.column])
    return reasons


def schedule_pool_suite(deal: Deal, public_filings: bool = False) -> Suite:
    """The pool as of the Cutoff Date. `public_filings`: the schedule was built from an EX-102
    filing, whose balances seldom sum to the Initial Pool Balance to the cent (CarMax's differ by
    hundreds of dollars from line 1 of the certificates): the Cutoff Pool Balance is then shown,
    not blocking."""
    e = EligibilityTerms.from_deal(deal)
    share = deal.new_vehicle_share
    term = deal.weighted_average_remaining_term
    pool_cents = decimal_to_cents(deal.initial_pool_balance)
    return Suite(
        f"{deal.deal_id}.receivable_schedule_pool",
        f"Receivable Schedule of {deal.trust_name}, the pool as of the Cutoff Date",
        "pool",
        (
            Rule(
                "2.3(s)",
                "ExpectColumnValuesToBeBetween",
                "new_vehicle_share",
                _between(
                    "new_vehicle_share",
                    float(share - e.new_vehicle_share_tolerance),
                    float(share + e.new_vehicle_share_tolerance),
                ),
                f"about {share * 100:.2f}% of the Pool Balance new vehicles "
                f"(±{e.new_vehicle_share_tolerance * 100:.2f} points)",
                tolerance=f"±{e.new_vehicle_share_tolerance * 100:.2f} percentage points: the "
                "agreement says 'approximately' and quotes two decimals of a percent.",
            ),
            Rule(
                "2.3(s)",
                "ExpectColumnValuesToBeBetween",
                "used_vehicle_share",
                _between(
                    "used_vehicle_share",
                    float(1 - share - e.new_vehicle_share_tolerance),
                    float(1 - share + e.new_vehicle_share_tolerance),
                ),
                f"about {(1 - share) * 100:.2f}% of the Pool Balance used vehicles",
                tolerance="as for the new-vehicle share",
            ),
            Rule(
                "2.3(v)",
                "ExpectColumnValuesToBeBetween",
                "weighted_average_remaining_term",
                _between(
                    "weighted_average_remaining_term",
                    float(term - e.remaining_term_tolerance),
                    float(term + e.remaining_term_tolerance),
                ),
                f"weighted average remaining term about {term} months "
                f"(±{e.remaining_term_tolerance})",
                tolerance=f"±{e.remaining_term_tolerance} months: the agreement says "
                "'approximately'; half a month is well inside one payment of seasoning.",
            ),
            Rule(
                "Cutoff Pool Balance",
                "ExpectColumnValuesToBeBetween",
                "cutoff_pool_balance_cents",
                _between("cutoff_pool_balance_cents", pool_cents, pool_cents),
                f"the schedule's Pool Balance at the Cutoff Date equals the deal file's "
                f"${deal.initial_pool_balance:,}",
                blocking=not public_filings,
                display="cents",
            ),
        ),
    )


# The servicing-criteria suite: every column of marts.rpt_servicing_criteria must be zero.
SERVICING_MEASURES = (
    ("balance_mismatch_count", "1122(d)(4)(v)", "the servicer's Principal Balance of every "
     "receivable equals the Simple Interest recomputation (within a cent)", ()),
    ("servicer_roll_forward_break_count", "1122(d)(1)(v)", "each receivable's reported ending "
     "balance is its beginning balance less principal, rebates and charge-off", ()),
    ("servicer_continuity_break_count", "1122(d)(1)(v)", "each receivable begins the period at "
     "the balance it ended the previous one", ()),
    ("missing_receivable_count", "1122(d)(1)(v)", "every receivable outstanding at the previous "
     "period end is on the tape", ()),
    ("pool_roll_forward_difference_cents", "1122(d)(1)(v)", "the Pool Balance rolls forward: "
     "line 5 is lines 1 - 2 - 3 - 4 (Exhibit A)", ()),
    ("charge_off_mismatch_count", "1122(d)(4)(xiv)", "charge-offs recorded when and as Art. I "
     "'Defaulted Receivable' requires", ()),
    ("extension_beyond_final_date_count", "1122(d)(4)(vi)", "no extension beyond the Final "
     "Scheduled Maturity Date (3.2)", ("3.2",)),
    ("repurchase_exception_count", "1122(d)(4)(iii)", "breached receivables repurchased on the "
     "Distribution Date 2.4 sets, for the Purchase Amount", ("2.4",)),
    ("sources_minus_uses_cents", "1122(d)(3)(ii)", "Available Funds are exactly what the "
     "priority of payments applies", ()),
    ("seniority_violation_count", "1122(d)(3)(ii)", "principal paid in the sequential order of "
     "Indenture 2.8(d)", ()),
    ("reserve_roll_forward_difference_cents", "1122(d)(4)(xv)", "the Reserve Account rolls "
     "forward exactly (4.7)", ()),
    ("advance_exception_count", "1122(d)(2)(iii)", "Simple Interest Advances only as 4.4(a) "
     "allows: none on a Defaulted Receivable, none above the interest scheduled and not "
     "received", ("4.4",)),
    ("missing_market_input_count", "1122(d)(3)(ii)", "the Distribution Date's index rate (while "
     "a floating-rate class is outstanding) and trust account earnings are delivered", ()),
)  # fmt: skip


def servicing_criteria_suite() -> Suite:
    zero = tuple(
        Rule(
            representation,
            "ExpectColumnValuesToBeBetween",
            column,
            _between(column, 0, 0),
            rule,
            blocking=True,
            also=also,
        )
        for column, representation, rule, also in SERVICING_MEASURES
    )
    # expectations skip NULLs: a period the measure could not be computed for must fail too
    measured = tuple(
        Rule(
            representation,
            "ExpectColumnValuesToNotBeNull",
            column,
            {"column": column},
            f"{column} measured for the period",
            blocking=True,
        )
        for column, representation, _rule, _also in SERVICING_MEASURES
    )
    return Suite(
        "servicing_criteria",
        "Monthly tapes and waterfall, one row per trust and Collection Period "
        "(marts.rpt_servicing_criteria)",
        "period_key",
        zero + measured,
    )
