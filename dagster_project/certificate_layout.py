"""The lines of the Monthly Servicer's Certificate (Exhibit A), laid out for a deal's classes.

Exhibit A numbers its lines 1 to 80 for the eight classes of 2015-4. Other trusts of the shelf
print the same form for their own classes: the class letters of lines 8, 9, 29, 45 and 46 follow
the deal's class order, lines 66 onwards get one line per class, a deal without a floating-rate
class has no index-rate lines (15-16), and the older form has no receivable-count line (6), so
every later line moves up (as in the published 2012-3 and 2010 certificates). Each line has a
semantic key the dbt models fill; the printed id comes from here.

The lines of the priority of payments (26-42) follow the order of
dbt/seeds/priority_of_payments.csv, the one place that order is written (the waterfall and
marts.fct_waterfall read the same seed).
"""

import csv
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from dagster_project.deal import PROJECT_ROOT, Deal, NoteClass

LETTERS = "abcdefghijklmnopqrstuvwxyz"
PRIORITY_OF_PAYMENTS = PROJECT_ROOT / "dbt" / "seeds" / "priority_of_payments.csv"
PRINCIPAL_AMOUNTS = {
    "A": ("priority_principal_distributable_amount", "Priority Principal Distributable Amount"),
    "B": ("secondary_principal_distributable_amount", "Secondary Principal Distributable Amount"),
    "C": ("tertiary_principal_distributable_amount", "Tertiary Principal Distributable Amount"),
    "D": ("quaternary_principal_distributable_amount", "Quaternary Principal Distributable Amount"),
}
TIER_NAMES = {"A": "Class A", "B": "Class B", "C": "Class C", "D": "Class D"}


@dataclass(frozen=True)
class PaymentStep:
    step_order: int
    step: str
    funded_from: str  # available_funds (Indenture 2.8(a)) or reserve_excess (SSA 4.7(d))
    pays: str
    section: str


@cache
def priority_of_payments() -> tuple[PaymentStep, ...]:
    with PRIORITY_OF_PAYMENTS.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    steps = tuple(
        PaymentStep(int(r["step_order"]), r["step"], r["funded_from"], r["pays"], r["section"])
        for r in rows
    )
    return tuple(sorted(steps, key=lambda s: s.step_order))


@dataclass(frozen=True)
class Line:
    line: str  # printed id: "1", "8a_begin", "29d", "78a_count"
    key: str  # semantic key filled by the models, e.g. "class_balance_end:A-1"
    label: str
    kind: str  # money, count, factor, percent, rate, months, flag
    line_order: int
    section: str  # Exhibit A's heading above the line
    group_label: str  # the numbered line's own heading above its letters ("Finance Charges:")
    payment_step: str  # the step of the priority of payments the line shows ('' if none)


class _Layout:
    def __init__(self):
        self.lines: list[Line] = []
        self.number = 0
        self.heading = ""
        self.step = ""

    def section(self, heading: str) -> None:
        self.heading = heading

    def next(self) -> int:
        self.number += 1
        return self.number

    def add(self, line: str, key: str, label: str, kind: str = "money", group: str = "") -> None:
        self.lines.append(
            Line(line, key, label, kind, len(self.lines) + 1, self.heading, group, self.step)
        )

    def single(self, key: str, label: str, kind: str = "money") -> int:
        number = self.next()
        self.add(str(number), key, label, kind)
        return number

    def line_of(self, key: str) -> str:
        """The printed id of the latest line showing `key`: a label's reference to it (the
        numbers depend on the deal's classes)."""
        return next(line.line for line in reversed(self.lines) if line.key == key)

    def lettered(self, items: list[tuple[str, str, str]], group: str = "") -> int:
        number = self.next()
        for letter, (key, label, kind) in zip(LETTERS, items, strict=False):
            self.add(f"{number}{letter}", key, label, kind, group)
        return number


def _interest_items(c: NoteClass) -> list[tuple[str, str, str]]:
    return [
        (f"monthly_interest:{c.class_id}", f"{c.label} Monthly Interest", "money"),
        (
            f"additional_note_interest:{c.class_id}",
            f"Additional Note Interest related to {c.label} Monthly Interest",
            "money",
        ),
        (
            f"interest_on_additional_interest:{c.class_id}",
            f"Interest Due on Additional Note Interest related to {c.label} Monthly Interest",
            "money",
        ),
        (f"total_note_interest:{c.class_id}", f"Total {c.label} Note Interest", "money"),
    ]


def _payment_lines(deal: Deal, out: _Layout) -> dict[str, Callable[[], None]]:
    """What each step of the priority of payments prints in "Application of Available Funds"."""
    classes = deal.classes
    cap = f"{deal.successor_transition_cap:,.0f}"

    def tier_interest(tier: str) -> Callable[[], None]:
        members = [c for c in classes if c.tier == tier]

        def lines() -> None:
            group = f"{TIER_NAMES[tier]} Noteholder Interest Amount" + ("s" if tier == "A" else "")
            if tier == "A":
                out.lettered([item for c in members for item in _interest_items(c)], group)
            else:
                for c in members:
                    out.lettered(_interest_items(c), group)

        return lines if members else lambda: None

    def tier_principal(tier: str) -> Callable[[], None]:
        if not any(c.tier == tier for c in classes):
            return lambda: None
        return lambda: out.single(*PRINCIPAL_AMOUNTS[tier])

    def deficiency() -> None:
        out.single("required_payment_amount", "Required Payment Amount")
        out.single("reserve_account_deficiency_amount", "Reserve Account Deficiency")

    return {
        "servicing_fee": lambda: out.lettered(
            [
                ("monthly_servicing_fee_amount", "Monthly Servicing Fee", "money"),
                ("servicing_fee_unpaid_prior_amount", "Amount Unpaid from Prior Months", "money"),
                ("servicing_fee_paid_amount", "Amount Paid", "money"),
                ("servicing_fee_shortfall_amount", "Shortfall Amount (a + b - c)", "money"),
            ],
            "Servicing Fee",
        ),
        "unreimbursed_servicer_advances": lambda: out.single(
            "unreimbursed_servicer_advances_amount", "Unreimbursed Servicer Advances"
        ),
        "capped_successor_servicer_amounts": lambda: out.lettered(
            [
                (
                    "capped_transition_due_amount",
                    f"Unpaid Transition Expenses and Indemnity Amounts (Capped at ${cap})",
                    "money",
                ),
                ("capped_transition_paid_amount", "Amount Paid", "money"),
                ("capped_transition_shortfall_amount", "Shortfall Amount (a - b)", "money"),
            ],
            "Successor Servicer Unpaid Transition Expenses and Indemnity Amounts "
            f"(Capped at ${cap})",
        ),
        "class_a_interest": tier_interest("A"),
        "priority_principal": tier_principal("A"),
        "class_b_interest": tier_interest("B"),
        "secondary_principal": tier_principal("B"),
        "class_c_interest": tier_interest("C"),
        "tertiary_principal": tier_principal("C"),
        "class_d_interest": tier_interest("D"),
        "quaternary_principal": tier_principal("D"),
        "reserve_account_deficiency": deficiency,
        "regular_principal": lambda: out.single(
            "regular_principal_distributable_amount", "Regular Principal Distributable Amount"
        ),
        "remaining_transition_expenses": lambda: out.single(
            "remaining_transition_expenses_paid_amount",
            "Remaining Unpaid Servicer Transition Expenses, if any",
        ),
        "additional_servicing_fee": lambda: out.single(
            "additional_servicing_fee_paid_amount", "Additional Servicing Fees, if any"
        ),
        "remaining_indemnity_amounts": lambda: out.single(
            "remaining_indemnity_paid_amount",
            "Remaining Unpaid Successor Servicer Indemnity Amounts and Transition Expenses, if any",
        ),
    }


def certificate_layout(deal: Deal) -> list[Line]:
    classes = deal.classes
    floating = [c for c in classes if c.rate_type == "floating"]
    total_letter = LETTERS[len(classes)]
    out = _Layout()

    out.section("Pool Balance")
    out.single(
        "beginning_pool_balance",
        "Pool Balance on the close of the last day of the preceding Collection Period",
    )
    out.single("principal_collections_amount", "Collections allocable to Principal")
    out.single("purchase_principal_amount", "Purchase Amount allocable to Principal")
    out.single("defaulted_receivables_amount", "Defaulted Receivables")
    out.single(
        "ending_pool_balance",
        "Pool Balance on the close of the last day of the related Collection Period",
    )
    if deal.has_receivable_count_line:
        out.single(
            "receivables_outstanding",
            "Total number of Receivables outstanding on the close of the last day of the related "
            "Collection Period",
            "count",
        )
    out.single("initial_pool_balance", "Initial Pool Balance")
    for prefix, label, kind, group in (
        ("class_balance", "Note Balance", "money", "Note Balances"),
        ("class_factor", "Note Pool Factor", "factor", "Pool Factors"),
    ):
        number = out.next()
        for letter, c in zip(LETTERS, classes, strict=False):
            for side in ("begin", "end"):
                out.add(
                    f"{number}{letter}_{side}",
                    f"{prefix}_{side}:{c.class_id}",
                    f"{c.label} {label}",
                    kind,
                    group,
                )
        total = (
            f"Note Balance (sum a - {LETTERS[len(classes) - 1]})"
            if kind == "money"
            else "Note Pool Factor"
        )
        for side in ("begin", "end"):
            out.add(f"{number}{total_letter}_{side}", f"{prefix}_{side}:total", total, kind, group)
    out.single("overcollateralization_target_amount", "Overcollateralization Target Amount")
    out.single(
        "overcollateralization_amount",
        "Current overcollateralization amount (Pool Balance - Note Balance)",
    )
    out.single("weighted_average_coupon_percent", "Weighted Average Coupon", "percent")
    out.single("weighted_average_original_term", "Weighted Average Original Term", "months")
    out.single("weighted_average_remaining_term", "Weighted Average Remaining Term", "months")
    if floating:
        out.single("index_rate", f"{deal.floating_rate_index} for the accrual period", "rate")
        out.single(
            "floating_note_rate",
            f"Note Rate applicable to the {floating[0].label} notes for the accrual period",
            "rate",
        )

    out.section("Collections")
    out.lettered(
        [
            (
                "finance_charge_collections_amount",
                "Collections allocable to Finance Charge",
                "money",
            ),
            (
                "liquidation_finance_charge_amount",
                "Liquidation Proceeds allocable to Finance Charge",
                "money",
            ),
            (
                "purchase_finance_charge_amount",
                "Purchase Amount allocable to Finance Charge",
                "money",
            ),
            (
                "available_finance_charge_collections_amount",
                "Available Finance Charge Collections (sum a - c)",
                "money",
            ),
        ],
        "Finance Charges:",
    )
    out.lettered(
        [
            ("principal_collections_amount", "Collections allocable to Principal", "money"),
            (
                "liquidation_principal_amount",
                "Liquidation Proceeds allocable to Principal",
                "money",
            ),
            ("purchase_principal_amount", "Purchase Amount allocable to Principal", "money"),
            (
                "available_principal_collections_amount",
                "Available Principal Collections (sum a - c)",
                "money",
            ),
        ],
        "Principal:",
    )
    out.single("total_collections_amount", "Total Finance Charge and Principal Collections")
    out.single("collection_account_interest_amount", "Interest Income from Collection Account")
    out.single("simple_interest_advances_amount", "Simple Interest Advances")
    out.single("available_collections_amount", "Available Collections")
    out.section("Available Funds")
    out.single("available_collections_amount", "Available Collections")
    out.single("reserve_account_draw_amount", "Reserve Account Draw Amount")
    out.single("available_funds_amount", "Available Funds")

    out.section("Application of Available Funds")
    lines = _payment_lines(deal, out)
    for step in priority_of_payments():
        if step.step in lines:
            out.step = step.step
            lines[step.step]()
    out.step = ""

    out.section("Collection Account Activity")
    out.lettered(
        [
            (
                "collection_deposit_finance_charge_amount",
                "Total Daily Deposits of Finance Charge Collections",
                "money",
            ),
            (
                "available_principal_collections_amount",
                "Total Daily Deposits of Principal Collections",
                "money",
            ),
            ("reserve_account_draw_amount", "Withdrawal from Reserve Account", "money"),
            ("collection_account_interest_amount", "Interest Income", "money"),
            ("available_funds_amount", "Total Deposits to Collection Account (sum a - d)", "money"),
        ],
        "Deposits",
    )
    out.lettered(
        [
            (
                "paid_to_servicer_amount",
                "Servicing Fee and Unreimbursed Servicer Advances",
                "money",
            ),
            (
                "paid_to_successor_servicer_amount",
                "Successor Servicer Transition Expenses and Indemnity Amounts",
                "money",
            ),
            (
                "collection_to_note_payment_amount",
                "Deposit to Note Payment Account for Monthly Note Interest/Principal",
                "money",
            ),
            ("reserve_account_deposit_amount", "Deposit to Reserve Account", "money"),
            (
                "excess_collections_amount",
                "Excess Collections (Deposit to Certificate Payment Account for payment to "
                "Certificateholder)",
                "money",
            ),
            (
                "collection_withdrawals_amount",
                "Total Withdrawals from Collection Account (sum a - e)",
                "money",
            ),
        ],
        "Withdrawals",
    )
    out.section("Note Payment Account Activity")
    out.lettered(
        [
            (f"interest_paid:{c.class_id}", f"{c.label} Interest Distribution", "money")
            for c in classes
        ]
        + [
            (f"principal_paid:{c.class_id}", f"{c.label} Principal Distribution", "money")
            for c in classes
        ]
        + [("note_payment_deposits_amount", "Total Deposits to Note Payment Account", "money")],
        "Deposits",
    )
    out.lettered(
        [(f"class_distribution:{c.class_id}", f"{c.label} Distribution", "money") for c in classes]
        + [
            (
                "note_payment_withdrawals_amount",
                "Total Withdrawals from Note Payment Account",
                "money",
            )
        ],
        "Withdrawals",
    )
    out.section("Certificate Payment Account Activity")
    out.lettered(
        [
            ("excess_collections_amount", "Excess Collections", "money"),
            ("reserve_released_to_certificateholder_amount", "Reserve Account surplus", "money"),
            (
                "certificate_payment_deposits_amount",
                "Total Deposits to Certificate Payment Account (sum a - b)",
                "money",
            ),
        ],
        "Deposits",
    )
    out.lettered(
        [
            ("certificate_payment_deposits_amount", "Certificateholder Distribution", "money"),
            (
                "certificate_payment_deposits_amount",
                "Total Withdrawals from Certificate Payment Account",
                "money",
            ),
        ],
        "Withdrawals",
    )
    out.section("Required Reserve Account Amount")
    out.lettered(
        [
            ("specified_reserve_account_amount", f"${deal.required_reserve_amount:,}", "money"),
            ("note_balance_after_principal_paid_amount", "Note Balance", "money"),
        ],
        "Lesser of: (a or b)",
    )
    required = out.single("required_reserve_account_amount", "Required Reserve Account Amount")
    out.section("Reserve Account Reconciliation")
    out.single(
        "reserve_account_beginning_balance",
        "Beginning Balance (as of end of preceding Distribution Date)",
    )
    out.single("reserve_account_investment_earnings", "Investment Earnings")
    out.single("reserve_account_draw_amount", "Reserve Account Draw Amount")
    parts = (
        "reserve_account_beginning_balance",
        "reserve_account_investment_earnings",
        "reserve_account_draw_amount",
    )
    amount = out.single(
        "reserve_account_amount_after_draw",
        "Reserve Account Amount (Ln {} + Ln {} - Ln {})".format(*map(out.line_of, parts)),
    )
    # this line is redacted in the filed agreement (seven, four, nine and five letters, then a
    # line reference); the published certificates print it: the Collection Account's deposit to
    # the Reserve Account
    deposit = out.single(
        "reserve_account_deposit_amount",
        f"Deposit from Available Funds (Ln {out.line_of('reserve_account_deposit_amount')})",
    )
    released = out.lettered(
        [
            (
                "reserve_released_to_principal_amount",
                "the Note Payment Account for the payment of principal to the extent of any "
                "unfunded Regular Principal Distribution Amount; and",
                "money",
            ),
            (
                "reserve_released_to_successor_servicer_amount",
                "any Successor Servicer for the payment of any unfunded Transition Costs and "
                "Additional Servicing Fee",
                "money",
            ),
        ],
        "If Reserve Account Balance exceeds Required Reserve Account Amount, payment to",
    )
    surplus = out.single(
        "reserve_released_to_certificateholder_amount",
        "Payment to Certificateholder if Reserve Account Balance exceeds Required Reserve "
        f"Account Amount and to the extent no unfunded amounts described in Ln {released} exist",
    )
    ending = out.single(
        "reserve_account_ending_balance",
        f"Ending Balance (Ln{amount} + Ln{deposit} - Ln{released} - Ln{surplus})",
    )
    out.single(
        "reserve_account_ending_deficiency_amount",
        f"Reserve Account Deficiency (Ln{required} - Ln{ending})",
    )

    out.section("Instructions to the Trustee")
    out.single(
        "reserve_account_draw_amount",
        "Amount to be deposited from the Reserve Account into the Collection Account",
    )
    out.single(
        "paid_to_servicer_amount", "Amount to be paid to Servicer from the Collection Account"
    )
    out.single(
        "collection_to_note_payment_amount",
        "Amount to be deposited from the Collection Account into the Note Payment Account",
    )
    out.single(
        "excess_collections_amount",
        "Amount to be deposited from the Collection Account into the Certificate Payment Account",
    )
    out.single(
        "reserve_account_deposit_amount",
        "Amount to be deposited from the Collection Account into the Reserve Account",
    )
    out.lettered(
        [
            (
                "reserve_released_to_principal_amount",
                "the Note Payment Account for any unfunded Regular Principal Distributable Amount",
                "money",
            ),
            (
                "reserve_released_to_certificateholder_amount",
                "the Certificate Payment Account for payment to the Certificateholder",
                "money",
            ),
        ],
        "Amount to be deposited from the Reserve Account, if Reserve Account Balance exceeds "
        "Required Reserve Account Amount, into",
    )
    for c in classes:
        out.single(
            f"class_distribution:{c.class_id}",
            f"Amount to be paid to {c.label} Noteholders from the Note Payment Account",
        )
    out.single(
        "certificate_payment_deposits_amount",
        "Amount to be paid to Certificateholders from the Certificate Payment Account with "
        "respect to Excess Collections and Reserve Account surplus",
    )

    out.section("Net Loss and Delinquency Activity")
    out.single("net_losses_amount", "Net Losses with respect to preceding Collection Period")
    out.single("cumulative_net_losses_amount", "Cumulative Net Losses")
    out.single("cumulative_net_loss_percent", "Cumulative Net Loss Percentage", "percent")
    number = out.next()
    for letter, bucket, label in (
        ("a", "31_60", "31 to 60 days past due"),
        ("b", "61_90", "61 to 90 days past due"),
        ("c", "91_plus", "91 or more days past due"),
        ("d", "total", "Total Past Due (sum a-c)"),
    ):
        for measure, kind in (("count", "count"), ("balance", "money")):
            out.add(
                f"{number}{letter}_{measure}",
                f"delinquent_{bucket}_{measure}",
                label,
                kind,
                "Delinquency Analysis",
            )
    out.section("Servicer Covenant")
    out.single(
        "tangible_net_worth_amount",
        "CarMax, Inc Consolidated Tangible Net Worth as of the end of the Related Fiscal Quarter",
    )
    out.single(
        "tangible_net_worth_test",
        f"Is CarMax, Inc Consolidated Tangible Net Worth greater than "
        f"${deal.tangible_net_worth_minimum:,.0f}?",
        "flag",
    )
    return out.lines
