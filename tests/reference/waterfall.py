"""Plain-Python reference of the distribution waterfall, written from the agreement.

Independent of the SQL: Decimal arithmetic, one Distribution Date at a time, state in a small
dataclass. Produces the certificate's values keyed like dagster_project.certificate_layout, so a
test compares every line with the dbt output. Interpretations are the same as the models' docs:
Indenture 2.8(a) in Exhibit A's order; principal sequential (2.8(d)), equal principal_order pro
rata to balances; pro-rata shares rounded half up with the last class taking the remainder;
Additional Note Interest earns interest on the unpaid Monthly Note Interest only, and interest
paid goes to the oldest amounts first; the Reserve Account's deposit and release measure the
Required Reserve Account Amount on the Note Balance after the principal due, the certificate's
line 50 on the Note Balance after the principal paid (line 49b).
"""

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from dagster_project.deal import Deal

ZERO = Decimal("0.00")
TIERS = ("A", "B", "C", "D")
TIER_KEYS = {
    "A": "priority_principal_distributable_amount",
    "B": "secondary_principal_distributable_amount",
    "C": "tertiary_principal_distributable_amount",
    "D": "quaternary_principal_distributable_amount",
}


def cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def factor(balance: Decimal, initial: Decimal) -> Decimal:
    return (balance / initial).quantize(Decimal("0.0000001"), rounding=ROUND_HALF_UP)


@dataclass
class State:
    balances: dict[str, Decimal]
    unpaid_interest: dict[str, Decimal]  # unpaid Monthly Note Interest (earns interest)
    reserve: Decimal
    fee_unpaid: Decimal = ZERO
    advances_unpaid: Decimal = ZERO
    transition_unpaid: Decimal = ZERO
    indemnity_unpaid: Decimal = ZERO
    additional_fee_unpaid: Decimal = ZERO
    capped_paid: Decimal = ZERO
    unpaid_other: dict = field(default_factory=dict)  # unpaid interest on interest (earns none)


def opening_state(deal: Deal) -> State:
    return State(
        balances={c.class_id: c.initial_balance for c in deal.classes},
        unpaid_interest={c.class_id: ZERO for c in deal.classes},
        reserve=deal.initial_reserve_deposit,
    )


def split_pro_rata(amount: Decimal, weights: dict[str, Decimal]) -> dict[str, Decimal]:
    """Shares rounded half up; the last class takes the remainder."""
    total = sum(weights.values(), ZERO)
    ids = list(weights)
    if amount == total:
        return dict(weights)
    shares = {k: cents(amount * weights[k] / total) if total else ZERO for k in ids[:-1]}
    shares[ids[-1]] = amount - sum(shares.values(), ZERO)
    return shares


def distribute(deal: Deal, period: dict, state: State) -> tuple[dict, State]:
    """One Distribution Date: `period` holds the pool inputs (Decimal) and the calendar fields."""
    classes = deal.classes
    ids = [c.class_id for c in classes]
    bal = state.balances
    pool_end = period["ending_pool_balance"]
    v: dict = {}

    # Art. I Monthly Interest, Additional Note Interest and interest on the unpaid Monthly Note
    # Interest (not on unpaid interest on interest)
    other = {k: state.unpaid_other.get(k, ZERO) for k in ids}
    for c in classes:
        rate = c.rate if c.rate_type == "fixed" else period["index_rate"] + c.spread
        days = period["actual_days"] if c.day_count == "actual/360" else period["thirty_360_days"]
        if period["period_number"] == 1 and c.first_period_interest is not None:
            monthly = c.first_period_interest
        else:
            monthly = cents(bal[c.class_id] * rate * days / 360)
        extra = cents(state.unpaid_interest[c.class_id] * rate * days / 360)
        arrears = state.unpaid_interest[c.class_id] + other[c.class_id]
        v[f"monthly_interest:{c.class_id}"] = monthly
        v[f"additional_note_interest:{c.class_id}"] = arrears
        v[f"interest_on_additional_interest:{c.class_id}"] = extra
        v[f"total_note_interest:{c.class_id}"] = monthly + arrears + extra
    tni = {k: v[f"total_note_interest:{k}"] for k in ids}

    # 3.8 servicing fee; Total Servicing Fee includes unpaid prior amounts
    monthly_fee = cents(period["beginning_pool_balance"] * deal.servicing_rate / 12)
    fee_due = monthly_fee + state.fee_unpaid
    advances_due = period.get("unreimbursed_servicer_advances_amount", ZERO) + state.advances_unpaid
    transition_due = period.get("transition_expenses_amount", ZERO) + state.transition_unpaid
    indemnity_due = period.get("indemnity_amounts_amount", ZERO) + state.indemnity_unpaid
    additional_fee_due = (
        period.get("additional_servicing_fee_amount", ZERO) + state.additional_fee_unpaid
    )
    capped_due = min(
        transition_due + indemnity_due, max(deal.successor_transition_cap - state.capped_paid, ZERO)
    )

    # Art. I principal distributable amounts
    note_before = sum(bal.values(), ZERO)
    tier_amounts: dict[str, Decimal] = {}
    for tier in TIERS:
        senior = sum((bal[c.class_id] for c in classes if c.tier <= tier), ZERO)
        amount = max(max(senior - pool_end, ZERO) - sum(tier_amounts.values(), ZERO), ZERO)
        tier_classes = [c for c in classes if c.tier == tier]
        for c in tier_classes:
            if period["distribution_date"] >= c.final_distribution_date:
                ahead = sum(
                    (
                        bal[x.class_id]
                        for x in tier_classes
                        if x.principal_order <= c.principal_order
                    ),
                    ZERO,
                )
                amount = max(amount, ahead)
        tier_amounts[tier] = amount
    tiered = sum(tier_amounts.values(), ZERO)
    target = overcollateralization_target(deal, pool_end)
    regular = max(min(note_before, max(note_before + target - pool_end, ZERO) - tiered), ZERO)

    # 4.6(b), 4.1(d), Required Reserve Account Amount
    available_collections = (
        period["finance_charge_collections_amount"]
        + period["liquidation_finance_charge_amount"]
        + period["purchase_finance_charge_amount"]
        + period["principal_collections_amount"]
        + period["liquidation_principal_amount"]
        + period["purchase_principal_amount"]
        + period["collection_account_interest_amount"]
        + period["simple_interest_advances_amount"]
    )
    reserve_amount = state.reserve + period["reserve_investment_earnings_amount"]
    interest_due = sum(tni.values(), ZERO)
    required_payment = fee_due + advances_due + capped_due + interest_due + tiered
    all_covered = (
        available_collections + reserve_amount
        >= note_before + interest_due + fee_due + advances_due
    )
    # the Note Balance after the day's principal: never below zero (the Regular Principal
    # Distributable Amount, literally read, can exceed what the notes owe after the tiers)
    note_after_due = max(note_before - tiered - regular, ZERO)
    if all_covered or pool_end == 0:
        draw = reserve_amount
        required_reserve = ZERO
    else:
        draw = min(max(required_payment - available_collections, ZERO), reserve_amount)
        required_reserve = min(deal.required_reserve_amount, note_after_due)
    deficiency = max(required_reserve - (reserve_amount - draw), ZERO)
    funds = available_collections + draw

    def pay(due: Decimal) -> Decimal:
        nonlocal funds
        paid = min(funds, due)
        funds -= paid
        return paid

    paid_fee = pay(fee_due)
    paid_advances = pay(advances_due)
    paid_capped = pay(capped_due)
    tier_interest_paid: dict[str, Decimal] = {}
    tier_principal_paid: dict[str, Decimal] = {}
    for tier in TIERS:
        due = sum((tni[c.class_id] for c in classes if c.tier == tier), ZERO)
        tier_interest_paid[tier] = pay(due)
        tier_principal_paid[tier] = pay(tier_amounts[tier])
    paid_deposit = pay(deficiency)
    # 2.8(d) pays each class until it is paid in full: principal never exceeds the notes
    payable_regular = min(regular, note_before - tiered)
    paid_regular = pay(payable_regular)
    # lines 40 and 42: what the cap of line 28 leaves of each (transition expenses first)
    cap_to_transition = min(capped_due, transition_due)
    transition_after = transition_due - cap_to_transition
    indemnity_after = indemnity_due - (capped_due - cap_to_transition)
    paid_transition_rest = pay(transition_after)
    paid_additional_fee = pay(additional_fee_due)
    paid_indemnity_rest = pay(indemnity_after)
    excess_collections = funds

    # 4.7(d) release of the excess over the Required Reserve Account Amount
    excess = max(reserve_amount - draw - required_reserve, ZERO)
    to_principal = min(excess, payable_regular - paid_regular)
    to_transition = min(excess - to_principal, transition_after - paid_transition_rest)
    to_additional_fee = min(
        excess - to_principal - to_transition, additional_fee_due - paid_additional_fee
    )
    to_certificateholder = excess - to_principal - to_transition - to_additional_fee
    reserve_end = reserve_amount - draw + paid_deposit - excess

    # interest pro rata within each tier; principal sequential, equal orders pro rata
    interest_paid: dict[str, Decimal] = {}
    for tier in TIERS:
        members = {c.class_id: tni[c.class_id] for c in classes if c.tier == tier}
        if members:
            interest_paid.update(split_pro_rata(tier_interest_paid[tier], members))
    principal_total = sum(tier_principal_paid.values(), ZERO) + paid_regular + to_principal
    principal_paid: dict[str, Decimal] = {}
    remaining = principal_total
    for order in sorted({c.principal_order for c in classes}):
        group = {c.class_id: bal[c.class_id] for c in classes if c.principal_order == order}
        amount = min(remaining, sum(group.values(), ZERO))
        remaining -= amount
        principal_paid.update(split_pro_rata(amount, group))

    balances_end = {k: bal[k] - principal_paid[k] for k in ids}
    note_after = sum(balances_end.values(), ZERO)
    # Art. I "Required Reserve Account Amount" on the principal actually paid (lines 49b, 50, 59)
    required_paid = (
        ZERO if all_covered or pool_end == 0 else min(deal.required_reserve_amount, note_after)
    )
    initial_total = deal.initial_note_balance
    for c in classes:
        k = c.class_id
        v[f"class_balance_begin:{k}"] = bal[k]
        v[f"class_balance_end:{k}"] = balances_end[k]
        v[f"class_factor_begin:{k}"] = factor(bal[k], c.initial_balance)
        v[f"class_factor_end:{k}"] = factor(balances_end[k], c.initial_balance)
        v[f"interest_paid:{k}"] = interest_paid[k]
        v[f"principal_paid:{k}"] = principal_paid[k]
        v[f"class_distribution:{k}"] = interest_paid[k] + principal_paid[k]
    v["class_balance_begin:total"] = note_before
    v["class_balance_end:total"] = note_after
    v["class_factor_begin:total"] = factor(note_before, initial_total)
    v["class_factor_end:total"] = factor(note_after, initial_total)

    fc = (
        period["finance_charge_collections_amount"]
        + period["liquidation_finance_charge_amount"]
        + period["purchase_finance_charge_amount"]
    )
    pc = (
        period["principal_collections_amount"]
        + period["liquidation_principal_amount"]
        + period["purchase_principal_amount"]
    )
    interest_total = sum(interest_paid.values(), ZERO)
    for key in (
        "beginning_pool_balance",
        "principal_collections_amount",
        "purchase_principal_amount",
        "defaulted_receivables_amount",
        "ending_pool_balance",
        "receivables_outstanding",
        "initial_pool_balance",
        "finance_charge_collections_amount",
        "liquidation_finance_charge_amount",
        "purchase_finance_charge_amount",
        "liquidation_principal_amount",
        "collection_account_interest_amount",
        "simple_interest_advances_amount",
    ):
        v[key] = period[key]
    v.update(
        {
            "overcollateralization_target_amount": target,
            "overcollateralization_amount": pool_end - note_after,
            "available_finance_charge_collections_amount": fc,
            "available_principal_collections_amount": pc,
            "total_collections_amount": fc + pc,
            "available_collections_amount": available_collections,
            "reserve_account_draw_amount": draw,
            "available_funds_amount": available_collections + draw,
            "monthly_servicing_fee_amount": monthly_fee,
            "servicing_fee_unpaid_prior_amount": state.fee_unpaid,
            "servicing_fee_paid_amount": paid_fee,
            "servicing_fee_shortfall_amount": fee_due - paid_fee,
            "unreimbursed_servicer_advances_amount": advances_due,
            "capped_transition_due_amount": capped_due,
            "capped_transition_paid_amount": paid_capped,
            "capped_transition_shortfall_amount": capped_due - paid_capped,
            "required_payment_amount": required_payment,
            "reserve_account_deficiency_amount": deficiency,
            "regular_principal_distributable_amount": regular,
            "remaining_transition_expenses_paid_amount": paid_transition_rest,
            "additional_servicing_fee_paid_amount": paid_additional_fee,
            "remaining_indemnity_paid_amount": paid_indemnity_rest,
            "collection_deposit_finance_charge_amount": fc
            + period["simple_interest_advances_amount"],
            "paid_to_servicer_amount": paid_fee + paid_advances + paid_additional_fee,
            "paid_to_successor_servicer_amount": paid_capped
            + paid_transition_rest
            + paid_indemnity_rest,
            "collection_to_note_payment_amount": interest_total + principal_total - to_principal,
            "reserve_account_deposit_amount": paid_deposit,
            "excess_collections_amount": excess_collections,
            "collection_withdrawals_amount": available_collections + draw,
            "note_payment_deposits_amount": interest_total + principal_total,
            "note_payment_withdrawals_amount": interest_total + principal_total,
            "reserve_released_to_certificateholder_amount": to_certificateholder,
            "certificate_payment_deposits_amount": excess_collections + to_certificateholder,
            "specified_reserve_account_amount": deal.required_reserve_amount,
            "note_balance_after_principal_paid_amount": note_after,
            "required_reserve_account_amount": required_paid,
            "reserve_account_beginning_balance": state.reserve,
            "reserve_account_investment_earnings": period["reserve_investment_earnings_amount"],
            "reserve_account_amount_after_draw": reserve_amount - draw,
            "reserve_released_to_principal_amount": to_principal,
            "reserve_released_to_successor_servicer_amount": to_transition + to_additional_fee,
            "reserve_account_ending_balance": reserve_end,
            "reserve_account_ending_deficiency_amount": max(required_paid - reserve_end, ZERO),
        }
    )
    for tier, key in TIER_KEYS.items():
        v[key] = tier_amounts[tier]
    if any(c.rate_type == "floating" for c in classes):
        spread = next(c.spread for c in classes if c.rate_type == "floating")
        v["index_rate"] = period["index_rate"] * 100
        v["floating_note_rate"] = (period["index_rate"] + spread) * 100

    # interest paid goes to the oldest amounts first: unpaid Monthly Note Interest, then unpaid
    # interest on interest and this date's interest on it, then this date's Monthly Interest
    unpaid_monthly, unpaid_other = {}, {}
    for k in ids:
        paid = interest_paid[k]
        to_arrears = min(paid, state.unpaid_interest[k])
        to_other = min(paid - to_arrears, other[k] + v[f"interest_on_additional_interest:{k}"])
        to_current = paid - to_arrears - to_other
        unpaid_monthly[k] = (
            state.unpaid_interest[k] - to_arrears + v[f"monthly_interest:{k}"] - to_current
        )
        unpaid_other[k] = other[k] + v[f"interest_on_additional_interest:{k}"] - to_other
    next_state = State(
        balances=balances_end,
        unpaid_interest=unpaid_monthly,
        unpaid_other=unpaid_other,
        reserve=reserve_end,
        fee_unpaid=fee_due - paid_fee,
        advances_unpaid=advances_due - paid_advances,
        transition_unpaid=transition_after - paid_transition_rest - to_transition,
        indemnity_unpaid=indemnity_after - paid_indemnity_rest,
        additional_fee_unpaid=additional_fee_due - paid_additional_fee - to_additional_fee,
        capped_paid=state.capped_paid + paid_capped,
    )
    return v, next_state


def overcollateralization_target(deal: Deal, pool_end: Decimal) -> Decimal:
    """Art. I "Overcollateralization Target Amount": a share of the cutoff Pool Balance, or of
    the Pool Balance at the period end with a floor as a share of the cutoff Pool Balance."""
    if deal.overcollateralization_base == "cutoff":
        return cents(deal.initial_pool_balance * deal.overcollateralization_percent)
    return max(
        cents(pool_end * deal.overcollateralization_percent),
        cents(deal.initial_pool_balance * deal.overcollateralization_floor_percent),
    )


def run(deal: Deal, periods: list[dict], state: State | None = None) -> dict:
    """Certificate values per Distribution Date: {distribution_date: {key: Decimal}}."""
    state = state or opening_state(deal)
    out = {}
    for period in periods:
        values, state = distribute(deal, period, state)
        out[period["distribution_date"]] = values
    return out
