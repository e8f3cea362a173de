"""The lines of the Monthly Servicer's Certificate (Exhibit A), laid out for a deal's classes.

Exhibit A numbers its lines 1 to 80 for the eight classes of 2015-4. Other trusts of the shelf
print the same form for their own classes: the class letters of lines 8, 9, 29, 45 and 46 follow
the deal's class order, lines 66 onwards get one line per class, and a deal without a floating-rate
class has no LIBOR lines (15-16), so every later line moves up by two (as in the published 2012-3
certificates). Each line has a semantic key the dbt models fill; the printed id comes from here.
"""

from dataclasses import dataclass

from dagster_project.deal import Deal

LETTERS = "abcdefghijklmnopqrstuvwxyz"
PRINCIPAL_AMOUNTS = {
    "A": ("priority_principal_distributable_amount", "Priority Principal Distributable Amount"),
    "B": ("secondary_principal_distributable_amount", "Secondary Principal Distributable Amount"),
    "C": ("tertiary_principal_distributable_amount", "Tertiary Principal Distributable Amount"),
    "D": ("quaternary_principal_distributable_amount", "Quaternary Principal Distributable Amount"),
}
TIERS = tuple(PRINCIPAL_AMOUNTS)


@dataclass(frozen=True)
class Line:
    line: str  # printed id: "1", "8a_begin", "29d", "78a_count"
    key: str  # semantic key filled by the models, e.g. "class_balance_end:A-1"
    label: str
    kind: str  # money, count, factor, percent, rate, months, flag
    line_order: int
    section: str  # Exhibit A's heading above the line


class _Layout:
    def __init__(self):
        self.lines: list[Line] = []
        self.number = 0
        self.heading = ""

    def section(self, heading: str) -> None:
        self.heading = heading

    def next(self) -> int:
        self.number += 1
        return self.number

    def add(self, line: str, key: str, label: str, kind: str = "money") -> None:
        self.lines.append(Line(line, key, label, kind, len(self.lines) + 1, self.heading))

    def single(self, key: str, label: str, kind: str = "money") -> int:
        number = self.next()
        self.add(str(number), key, label, kind)
        return number

    def lettered(self, items: list[tuple[str, str, str]]) -> int:
        number = self.next()
        for letter, (key, label, kind) in zip(LETTERS, items, strict=False):
            self.add(f"{number}{letter}", key, label, kind)
        return number


def certificate_layout(deal: Deal) -> list[Line]:
    classes = deal.classes
    class_a = [c for c in classes if c.tier == "A"]
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
    out.single(
        "receivables_outstanding",
        "Total number of Receivables outstanding on the close of the last day of the related "
        "Collection Period",
        "count",
    )
    out.single("initial_pool_balance", "Initial Pool Balance")
    for prefix, label, kind in (
        ("class_balance", "Note Balance", "money"),
        ("class_factor", "Note Pool Factor", "factor"),
    ):
        number = out.next()
        for letter, c in zip(LETTERS, classes, strict=False):
            for side in ("begin", "end"):
                out.add(
                    f"{number}{letter}_{side}",
                    f"{prefix}_{side}:{c.class_id}",
                    f"{c.label} {label}",
                    kind,
                )
        total = (
            f"Note Balance (sum a - {LETTERS[len(classes) - 1]})"
            if kind == "money"
            else "Note Pool Factor"
        )
        for side in ("begin", "end"):
            out.add(f"{number}{total_letter}_{side}", f"{prefix}_{side}:total", total, kind)
    out.single("overcollateralization_target_amount", "Overcollateralization Target Amount")
    out.single(
        "overcollateralization_amount",
        "Current overcollateralization amount (Pool Balance - Note Balance)",
    )
    out.single("weighted_average_coupon_percent", "Weighted Average Coupon", "percent")
    out.single("weighted_average_original_term", "Weighted Average Original Term", "months")
    out.single("weighted_average_remaining_term", "Weighted Average Remaining Term", "months")
    if floating:
        out.single("libor_rate", "1- Month LIBOR for the accrual period", "rate")
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
        ]
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
        ]
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
    out.lettered(
        [
            ("monthly_servicing_fee_amount", "Monthly Servicing Fee", "money"),
            ("servicing_fee_unpaid_prior_amount", "Amount Unpaid from Prior Months", "money"),
            ("servicing_fee_paid_amount", "Amount Paid", "money"),
            ("servicing_fee_shortfall_amount", "Shortfall Amount (a + b - c)", "money"),
        ]
    )
    out.single("unreimbursed_servicer_advances_amount", "Unreimbursed Servicer Advances")
    cap = f"{deal.successor_transition_cap:,.0f}"
    out.lettered(
        [
            (
                "capped_transition_due_amount",
                f"Unpaid Transition Expenses and Indemnity Amounts (Capped at ${cap})",
                "money",
            ),
            ("capped_transition_paid_amount", "Amount Paid", "money"),
            ("capped_transition_shortfall_amount", "Shortfall Amount (a - b)", "money"),
        ]
    )

    def interest_items(c):
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

    out.lettered([item for c in class_a for item in interest_items(c)])
    for tier in TIERS:
        if tier != "A":
            for c in (c for c in classes if c.tier == tier):
                out.lettered(interest_items(c))
        if any(c.tier == tier for c in classes):
            out.single(*PRINCIPAL_AMOUNTS[tier])
    out.single("required_payment_amount", "Required Payment Amount")
    out.single("reserve_account_deficiency_amount", "Reserve Account Deficiency")
    out.single("regular_principal_distributable_amount", "Regular Principal Distributable Amount")
    out.single(
        "remaining_transition_expenses_paid_amount",
        "Remaining Unpaid Servicer Transition Expenses, if any",
    )
    out.single("additional_servicing_fee_paid_amount", "Additional Servicing Fees, if any")
    out.single(
        "remaining_indemnity_paid_amount",
        "Remaining Unpaid Successor Servicer Indemnity Amounts and Transition Expenses, if any",
    )

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
        ]
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
        ]
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
        + [("note_payment_deposits_amount", "Total Deposits to Note Payment Account", "money")]
    )
    out.lettered(
        [(f"class_distribution:{c.class_id}", f"{c.label} Distribution", "money") for c in classes]
        + [
            (
                "note_payment_withdrawals_amount",
                "Total Withdrawals from Note Payment Account",
                "money",
            )
        ]
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
        ]
    )
    out.lettered(
        [
            ("certificate_payment_deposits_amount", "Certificateholder Distribution", "money"),
            (
                "certificate_payment_deposits_amount",
                "Total Withdrawals from Certificate Payment Account",
                "money",
            ),
        ]
    )
    out.section("Required Reserve Account Amount")
    out.lettered(
        [
            ("specified_reserve_account_amount", f"${deal.required_reserve_amount:,}", "money"),
            ("note_balance_after_principal_due_amount", "Note Balance", "money"),
        ]
    )
    out.single("required_reserve_account_amount", "Required Reserve Account Amount")
    out.section("Reserve Account Reconciliation")
    out.single(
        "reserve_account_beginning_balance",
        "Beginning Balance (as of end of preceding Distribution Date)",
    )
    out.single("reserve_account_investment_earnings", "Investment Earnings")
    out.single("reserve_account_draw_amount", "Reserve Account Draw Amount")
    out.single("reserve_account_amount_after_draw", "Reserve Account Amount")
    out.single("required_reserve_account_amount", "Required Reserve Account Amount")
    out.lettered(
        [
            (
                "reserve_released_to_principal_amount",
                "the Note Payment Account for the payment of principal to the extent of any "
                "unfunded Regular Principal Distribution Amount",
                "money",
            ),
            (
                "reserve_released_to_successor_servicer_amount",
                "any Successor Servicer for the payment of any unfunded Transition Costs and "
                "Additional Servicing Fee",
                "money",
            ),
        ]
    )
    out.single(
        "reserve_released_to_certificateholder_amount",
        "Payment to Certificateholder if Reserve Account Balance exceeds Required Reserve "
        "Account Amount",
    )
    out.single("reserve_account_ending_balance", "Ending Balance")
    out.single("reserve_account_ending_deficiency_amount", "Reserve Account Deficiency")

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
        ]
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
        out.add(f"{number}{letter}_count", f"delinquent_{bucket}_count", label, "count")
        out.add(f"{number}{letter}_balance", f"delinquent_{bucket}_balance", label, "money")
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
