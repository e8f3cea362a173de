"""The deal files: every term of the agreement the computations need, read once, validated.

The shelf is the folder of deal files (data/deals/, or CAOT_DEALS_DIR): one YAML file per trust;
adding a file adds a trust. A deal file is checked for its form (every field known, typed, money
as quoted decimals) and for its meaning (dates in order, class balances summing to the note
total, rates in range, one class per principal order unless pro rata is declared); an error names
the file and the field. docs/deal_file.md documents every field with its section.
"""

import datetime as dt
import hashlib
import os
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml

from dagster_project.money import round_cents, to_decimal

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DEALS_DIR = PROJECT_ROOT / "data" / "deals"
DEFAULT_DEAL_FILE = DEFAULT_DEALS_DIR / "caot_2015_4.yaml"  # the sample deal's trust
DAY_COUNTS = ("actual/360", "30/360")
RATE_TYPES = ("fixed", "floating")
TIERS = ("A", "B", "C", "D")  # Priority, Secondary, Tertiary, Quaternary (Art. I)
OC_BASES = ("cutoff", "current")
BUSINESS_DAY_RULES = ("federal_reserve",)  # business_calendar.py: the Federal Reserve Banks' days
# a deal_id names the trust's input folder and is part of each partition key ("deal|period")
DEAL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# The eligibility block: Section 2.3's bounds and the expectation suites' tolerances, each with
# the kind it is read as (the suites need every one: quality/suites.py EligibilityTerms)
ELIGIBILITY = {
    "originated_after": "date",  # 2.3(t)
    "min_original_term": "count",  # 2.3(u), months
    "max_original_term": "count",
    "min_remaining_term": "count",
    "max_remaining_term": "count",
    "min_principal_balance": "money",  # 2.3(q)
    "max_apr": "share",  # 2.3(w), a fraction
    "max_days_past_due": "count",  # 2.3(k), (z)
    "min_payments_made": "count",  # 2.3(a)(viii)
    "level_payment_tolerance": "money",  # 2.3(a)(iii)
    "new_vehicle_share_tolerance": "share",  # 2.3(s)
    "remaining_term_tolerance": "months",  # 2.3(v)
}
# PyYAML's safe loader, in libyaml's C implementation where the wheel has it (about ten times
# faster: the definitions and every run step read the shelf's deal files)
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


MAX_NOTE_RATE = Decimal("0.25")  # a fixed Note Rate above it is a typing error, not a term
MAX_SERVICING_RATE = Decimal("0.05")


def _not_negative(count: int, read, field: str) -> int:
    if count < 0:
        raise read.fail(field, f"cannot be negative: {count}")
    return count


class DealFileError(ValueError):
    """A deal file that is missing a term, holds a malformed one, or one that makes no sense."""


@dataclass(frozen=True)
class NoteClass:
    class_id: str
    label: str
    tier: str
    principal_order: int
    initial_balance: Decimal
    rate_type: str
    rate: Decimal | None
    spread: Decimal | None
    day_count: str
    first_period_interest: Decimal | None
    final_distribution_date: dt.date


@dataclass(frozen=True)
class Deal:
    path: Path
    sha256: str
    trust_name: str
    deal_id: str
    servicer_name: str
    cutoff_date: dt.date
    closing_date: dt.date
    first_determination_date: dt.date
    first_distribution_date: dt.date
    final_scheduled_maturity_date: dt.date
    determination_day_of_month: int
    distribution_day_of_month: int
    fiscal_year_end_month: int
    business_day_rule: str
    initial_pool_balance: Decimal
    initial_receivable_count: int
    new_vehicle_share: Decimal
    weighted_average_remaining_term: Decimal
    eligibility: dict
    servicing_rate: Decimal
    successor_transition_cap: Decimal
    defaulted_days_past_due: int
    repurchase_cure_days: int
    required_reserve_amount: Decimal
    initial_reserve_deposit: Decimal
    overcollateralization_percent: Decimal
    overcollateralization_base: str  # "cutoff" (fixed) or "current" Pool Balance
    overcollateralization_floor_percent: Decimal  # of the cutoff Pool Balance; 0 = none
    clean_up_call_percent: Decimal
    tangible_net_worth_minimum: Decimal
    floating_rate_index: str
    has_receivable_count_line: bool
    classes: tuple[NoteClass, ...]

    @property
    def initial_note_balance(self) -> Decimal:
        return sum((c.initial_balance for c in self.classes), Decimal("0"))

    @property
    def overcollateralization_target(self) -> Decimal:
        """Art. I "Overcollateralization Target Amount" where it is fixed: a share of the cutoff
        Pool Balance, in cents (2015-4: 0.50%). Deals whose target follows the current Pool
        Balance compute it per Distribution Date (int_waterfall__period_inputs)."""
        return round_cents(self.initial_pool_balance * self.overcollateralization_percent)

    @property
    def first_collection_period(self) -> dt.date:
        """First day of the month holding the first Collection Period (Art. I)."""
        first = self.cutoff_date + dt.timedelta(days=1)
        return first.replace(day=1)

    def note_class(self, class_id: str) -> NoteClass:
        for note_class in self.classes:
            if note_class.class_id == class_id:
                return note_class
        raise KeyError(class_id)

    def table_row(self) -> dict:
        """The deal's row of raw.deals: one typed column per term (docs/deal_file.md)."""
        return {
            "deal_id": self.deal_id,
            "trust_name": self.trust_name,
            "servicer_name": self.servicer_name,
            "cutoff_date": self.cutoff_date,
            "closing_date": self.closing_date,
            "first_determination_date": self.first_determination_date,
            "first_distribution_date": self.first_distribution_date,
            "final_scheduled_maturity_date": self.final_scheduled_maturity_date,
            "initial_pool_balance": self.initial_pool_balance,
            "initial_note_balance": self.initial_note_balance,
            "servicing_rate": self.servicing_rate,
            "successor_transition_cap": self.successor_transition_cap,
            "defaulted_days_past_due": self.defaulted_days_past_due,
            "repurchase_cure_days": self.repurchase_cure_days,
            "required_reserve_amount": self.required_reserve_amount,
            "initial_reserve_deposit": self.initial_reserve_deposit,
            "overcollateralization_percent": self.overcollateralization_percent,
            "overcollateralization_base": self.overcollateralization_base,
            "overcollateralization_floor_percent": self.overcollateralization_floor_percent,
            "clean_up_call_percent": self.clean_up_call_percent,
            "tangible_net_worth_minimum": self.tangible_net_worth_minimum,
            "floating_rate_index": self.floating_rate_index,
            "has_receivable_count_line": self.has_receivable_count_line,
            "deal_file": self.path.name,
            "deal_file_sha256": self.sha256,
        }


# Every field a deal file may hold: a section's fields, or None for a plain value.
KNOWN_FIELDS: dict[str, set[str] | None] = {
    "trust_name": None,
    "deal_id": None,
    "servicer": None,
    "dates": {
        "cutoff_date",
        "closing_date",
        "first_determination_date",
        "first_distribution_date",
        "final_scheduled_maturity_date",
        "determination_day_of_month",
        "distribution_day_of_month",
        "fiscal_year_end_month",
    },
    "calendar": {"business_day_rule"},
    "pool": {
        "initial_pool_balance",
        "initial_note_balance",
        "initial_receivable_count",
        "new_vehicle_share",
        "weighted_average_remaining_term",
    },
    "eligibility": set(ELIGIBILITY),
    "servicing": {
        "servicing_rate",
        "successor_transition_cap",
        "defaulted_days_past_due",
        "repurchase_cure_days",
    },
    "reserve_account": {"required_amount", "initial_deposit"},
    "overcollateralization": {
        "target_percent_of_cutoff_pool_balance",
        "target_percent_of_current_pool_balance",
        "floor_percent_of_cutoff_pool_balance",
    },
    "clean_up_call": {"pool_balance_percent_of_cutoff"},
    "servicer_covenant": {"consolidated_tangible_net_worth_minimum"},
    "floating_rate_index": {"name"},
    "certificate": {"receivable_count_line"},
    "classes": None,
}
CLASS_FIELDS = {
    "class_id",
    "label",
    "tier",
    "principal_order",
    "pro_rata",
    "initial_balance",
    "rate_type",
    "rate",
    "spread",
    "day_count",
    "first_period_interest",
    "final_distribution_date",
}


class _Reader:
    """Reads typed fields of one deal file; every error names the file and the field."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, field: str, problem: str) -> DealFileError:
        return DealFileError(f"{self.path}: field '{field}' {problem}")

    def require(self, mapping: dict, key: str, where: str = ""):
        if not isinstance(mapping, dict) or mapping.get(key) is None:
            raise DealFileError(f"{self.path}: missing required field '{where}{key}'")
        return mapping[key]

    def date(self, value, field: str) -> dt.date:
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value))
        except ValueError as error:
            raise self.fail(field, f"is not a date (YYYY-MM-DD): {value!r}") from error

    def decimal(self, value, field: str) -> Decimal:
        if isinstance(value, float):
            raise self.fail(field, f"must be a quoted decimal string, got {value!r}")
        try:
            number = to_decimal(value)
        except Exception as error:
            raise self.fail(field, f"is not a decimal: {value!r}") from error
        if not number.is_finite():  # NaN, Infinity
            raise self.fail(field, f"is not a decimal: {value!r}")
        return number

    def integer(self, value, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise self.fail(field, f"is not an integer: {value!r}")
        try:
            return int(value)
        except ValueError as error:
            raise self.fail(field, f"is not an integer: {value!r}") from error

    def share(self, value, field: str, at_most: Decimal = Decimal("1")) -> Decimal:
        """A percentage written as a fraction (0.0050 = 0.50%): between 0 and `at_most` (1, or
        the most a term of its kind can be)."""
        number = self.decimal(value, field)
        if not Decimal("0") <= number <= at_most:
            raise self.fail(
                field, f"must be a fraction between 0 and {at_most} (0.0050 = 0.50%): {value}"
            )
        return number

    def money(self, value, field: str) -> Decimal:
        number = self.decimal(value, field)
        if number < 0 or round_cents(number) != number:
            raise self.fail(field, f"must be a non-negative amount in cents: {value}")
        return number

    def eligibility(self, terms: dict) -> dict:
        """The eligibility block's terms present, each read as its kind (ELIGIBILITY)."""
        values = {}
        for name, raw in terms.items():
            field, kind = f"eligibility.{name}", ELIGIBILITY[name]
            if raw is None:
                continue
            if kind == "date":
                values[name] = self.date(raw, field)
            elif kind == "count":
                values[name] = _not_negative(self.integer(raw, field), self, field)
            elif kind == "money":
                values[name] = self.money(raw, field)
            elif kind == "share":
                values[name] = self.share(raw, field)
            else:
                values[name] = self.decimal(raw, field)
                if values[name] < 0:
                    raise self.fail(field, f"cannot be negative: {raw}")
        return values


def _check_known_fields(raw: dict, path: Path) -> None:
    for key, value in raw.items():
        if key not in KNOWN_FIELDS:
            raise DealFileError(f"{path}: unknown field '{key}' (misspelt?)")
        fields = KNOWN_FIELDS[key]
        if fields is None:
            continue
        if not isinstance(value, dict):
            raise DealFileError(f"{path}: field '{key}' must be a mapping")
        for inner in value:
            if inner not in fields:
                raise DealFileError(f"{path}: unknown field '{key}.{inner}' (misspelt?)")


def _note_class(raw: dict, index: int, read: _Reader) -> NoteClass:
    where = f"classes[{index}]."
    if not isinstance(raw, dict):
        raise DealFileError(f"{read.path}: field 'classes[{index}]' must be a mapping")
    for key in raw:
        if key not in CLASS_FIELDS:
            raise DealFileError(f"{read.path}: unknown field '{where}{key}' (misspelt?)")

    def req(key):
        return read.require(raw, key, where)

    rate_type = req("rate_type")
    if rate_type not in RATE_TYPES:
        raise read.fail(where + "rate_type", f"must be one of {RATE_TYPES}")
    day_count = req("day_count")
    if day_count not in DAY_COUNTS:
        raise read.fail(where + "day_count", f"must be one of {DAY_COUNTS}")
    if str(req("tier")) not in TIERS:
        raise read.fail(
            where + "tier",
            "must be A, B, C or D (Priority, Secondary, Tertiary or Quaternary Principal "
            "Distributable Amount)",
        )
    # Note Rates: a fixed rate, or a spread over the deal's floating index (both fractions)
    # a Note Rate of the shelf is a few percent: above 25% is a misplaced decimal point
    rate = read.share(req("rate"), where + "rate", MAX_NOTE_RATE) if rate_type == "fixed" else None
    spread = read.decimal(req("spread"), where + "spread") if rate_type == "floating" else None
    if spread is not None and not Decimal("-0.05") <= spread <= Decimal("0.10"):
        raise read.fail(where + "spread", f"is out of range (a fraction: 0.0060 = 0.60%): {spread}")
    first = raw.get("first_period_interest")
    balance = read.money(req("initial_balance"), where + "initial_balance")
    if balance <= 0:
        raise read.fail(where + "initial_balance", "must be positive")
    return NoteClass(
        class_id=str(req("class_id")),
        label=str(raw.get("label") or f"Class {req('class_id')}"),
        tier=str(req("tier")),
        principal_order=read.integer(req("principal_order"), where + "principal_order"),
        initial_balance=balance,
        rate_type=rate_type,
        rate=rate,
        spread=spread,
        day_count=day_count,
        first_period_interest=None
        if first is None
        else read.money(first, where + "first_period_interest"),
        final_distribution_date=read.date(
            req("final_distribution_date"), where + "final_distribution_date"
        ),
    )


def _check_classes(raw_classes: list, classes: tuple[NoteClass, ...], path: Path) -> None:
    ids = [c.class_id for c in classes]
    if len(set(ids)) != len(ids):
        raise DealFileError(f"{path}: field 'classes' has duplicate class_id values: {ids}")
    orders = [c.principal_order for c in classes]
    if orders != sorted(orders):
        raise DealFileError(
            f"{path}: classes must be listed in principal_order (certificate order)"
        )
    tiers = [c.tier for c in classes]
    if tiers != sorted(tiers):
        raise DealFileError(f"{path}: classes must be listed by tier (A before B before C, D)")
    for index, (raw, c) in enumerate(zip(raw_classes, classes, strict=True)):
        sharing = [x for x in classes if x.principal_order == c.principal_order]
        # Indenture 2.8(d): principal is sequential; classes sharing an order are paid pro rata,
        # which the deal file must say (A-2a and A-2b)
        if len(sharing) > 1 and raw.get("pro_rata") is not True:
            raise DealFileError(
                f"{path}: field 'classes[{index}].principal_order' {c.principal_order} is shared "
                f"by {[x.class_id for x in sharing]}: declare pro_rata: true on each, or give "
                "each class its own order"
            )


def _check_dates(deal: Deal) -> None:
    path = deal.path
    chain = [
        ("dates.cutoff_date", deal.cutoff_date),
        ("dates.closing_date", deal.closing_date),
        ("dates.first_determination_date", deal.first_determination_date),
        ("dates.first_distribution_date", deal.first_distribution_date),
    ]
    for (before_name, before), (after_name, after) in zip(chain, chain[1:], strict=False):
        if not before < after:
            raise DealFileError(
                f"{path}: field '{after_name}' ({after}) must be after {before_name} ({before})"
            )
    for index, c in enumerate(deal.classes):
        field = f"classes[{index}].final_distribution_date"
        if not deal.first_distribution_date < c.final_distribution_date:
            raise DealFileError(
                f"{path}: field '{field}' ({c.final_distribution_date}) "
                "must be after dates.first_distribution_date"
            )
        if c.final_distribution_date > deal.final_scheduled_maturity_date:
            raise DealFileError(
                f"{path}: field '{field}' ({c.final_distribution_date}) is after "
                f"dates.final_scheduled_maturity_date ({deal.final_scheduled_maturity_date})"
            )
    for name, day in (
        ("dates.determination_day_of_month", deal.determination_day_of_month),
        ("dates.distribution_day_of_month", deal.distribution_day_of_month),
    ):
        if not 1 <= day <= 28:
            raise DealFileError(f"{path}: field '{name}' must be a day between 1 and 28: {day}")
    if not 1 <= deal.fiscal_year_end_month <= 12:
        raise DealFileError(f"{path}: field 'dates.fiscal_year_end_month' must be 1-12")


def _overcollateralization(oc: dict, read: _Reader) -> tuple[Decimal, str, Decimal]:
    """Art. I "Overcollateralization Target Amount": a share of the cutoff Pool Balance (2015-4),
    or of the current Pool Balance with a floor as a share of the cutoff Pool Balance (older
    trusts of the shelf)."""
    where = "overcollateralization."
    fixed = oc.get("target_percent_of_cutoff_pool_balance")
    current = oc.get("target_percent_of_current_pool_balance")
    if (fixed is None) == (current is None):
        raise DealFileError(
            f"{read.path}: field '{where}' needs exactly one of "
            "target_percent_of_cutoff_pool_balance or target_percent_of_current_pool_balance"
        )
    floor = oc.get("floor_percent_of_cutoff_pool_balance")
    if fixed is not None:
        if floor is not None:
            raise read.fail(where + "floor_percent_of_cutoff_pool_balance",
                            "applies only to a target on the current Pool Balance")  # fmt: skip
        return (
            read.share(fixed, where + "target_percent_of_cutoff_pool_balance"),
            "cutoff",
            Decimal(0),
        )
    floor_share = (
        Decimal(0)
        if floor is None
        else read.share(floor, where + "floor_percent_of_cutoff_pool_balance")
    )
    return (
        read.share(current, where + "target_percent_of_current_pool_balance"),
        "current",
        floor_share,
    )


def _deal_id(value, read: _Reader) -> str:
    if not isinstance(value, str) or not DEAL_ID.fullmatch(value):
        raise read.fail(
            "deal_id", f"must be text of letters, digits, '.', '_' or '-' (caot-2015-4): {value!r}"
        )
    return value


def _business_day_rule(calendar: dict, read: _Reader) -> str:
    rule = calendar.get("business_day_rule", BUSINESS_DAY_RULES[0])
    if rule not in BUSINESS_DAY_RULES:
        raise read.fail(
            "calendar.business_day_rule", f"must be one of {BUSINESS_DAY_RULES}: {rule!r}"
        )
    return rule


def _unconstructed_date(text: str) -> str:
    """Which field holds the date YAML could not construct (the file read again as text)."""
    found: list[str] = []

    def walk(node, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{where}.{key}" if where else str(key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")
        elif isinstance(node, str) and re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", node):
            try:
                dt.date(*(int(part) for part in node.split("-")))
            except ValueError:
                found.append(f"field '{where}' is not a date: {node!r}")

    walk(yaml.load(text, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader)), "")
    return found[0] if found else "a value is not valid"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_deal(path: str | Path = DEFAULT_DEAL_FILE) -> Deal:
    """Read and validate a deal file; errors name the file and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = yaml.load(text, Loader=SAFE_LOADER)
    except FileNotFoundError as error:
        raise DealFileError(f"{path}: deal file not found") from error
    except yaml.YAMLError as error:
        raise DealFileError(f"{path}: not valid YAML: {error}") from error
    except ValueError as error:  # a date YAML cannot construct (2015-09-31)
        raise DealFileError(f"{path}: {_unconstructed_date(text)}: {error}") from error
    if not isinstance(raw, dict):
        raise DealFileError(f"{path}: the deal file must be a YAML mapping")
    _check_known_fields(raw, path)
    read = _Reader(path)

    def section(name, optional=False):
        value = raw.get(name) if optional else read.require(raw, name)
        return value or {}

    dates, pool, servicing = section("dates"), section("pool"), section("servicing")
    reserve, oc = section("reserve_account"), section("overcollateralization")
    call, covenant = section("clean_up_call"), section("servicer_covenant")
    calendar, certificate = section("calendar", True), section("certificate", True)
    index = section("floating_rate_index", True)
    raw_classes = read.require(raw, "classes")
    if not isinstance(raw_classes, list) or not raw_classes:
        raise DealFileError(f"{path}: field 'classes' must be a non-empty list")
    classes = tuple(_note_class(item, i, read) for i, item in enumerate(raw_classes))
    _check_classes(raw_classes, classes, path)

    def day(key):
        return read.date(read.require(dates, key, "dates."), "dates." + key)

    def number(block, name, key, default=None):
        value = block.get(key, default) if default is not None else read.require(block, key, name)
        return read.integer(value, name + key)

    oc_percent, oc_base, oc_floor = _overcollateralization(oc, read)
    floating = [c for c in classes if c.rate_type == "floating"]
    if floating and not index.get("name"):
        raise DealFileError(
            f"{path}: missing required field 'floating_rate_index.name' "
            f"(class {floating[0].class_id} is floating)"
        )
    deal = Deal(
        path=path,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        trust_name=str(read.require(raw, "trust_name")),
        deal_id=_deal_id(read.require(raw, "deal_id"), read),
        servicer_name=str(raw.get("servicer") or "CarMax Business Services, LLC"),
        cutoff_date=day("cutoff_date"),
        closing_date=day("closing_date"),
        first_determination_date=day("first_determination_date"),
        first_distribution_date=day("first_distribution_date"),
        final_scheduled_maturity_date=day("final_scheduled_maturity_date"),
        determination_day_of_month=number(dates, "dates.", "determination_day_of_month"),
        distribution_day_of_month=number(dates, "dates.", "distribution_day_of_month"),
        fiscal_year_end_month=number(dates, "dates.", "fiscal_year_end_month", 2),
        business_day_rule=_business_day_rule(calendar, read),
        initial_pool_balance=read.money(
            read.require(pool, "initial_pool_balance", "pool."), "pool.initial_pool_balance"
        ),
        initial_receivable_count=_not_negative(
            number(pool, "pool.", "initial_receivable_count", 0),
            read,
            "pool.initial_receivable_count",
        ),
        new_vehicle_share=read.share(pool.get("new_vehicle_share", "0"), "pool.new_vehicle_share"),
        weighted_average_remaining_term=read.decimal(
            pool.get("weighted_average_remaining_term", "0"), "pool.weighted_average_remaining_term"
        ),
        eligibility=read.eligibility(raw.get("eligibility") or {}),
        servicing_rate=read.share(  # Art. I "Servicing Rate": 1% a year at CarMax
            read.require(servicing, "servicing_rate", "servicing."),
            "servicing.servicing_rate",
            MAX_SERVICING_RATE,
        ),
        successor_transition_cap=read.money(
            read.require(servicing, "successor_transition_cap", "servicing."),
            "servicing.successor_transition_cap",
        ),
        defaulted_days_past_due=number(servicing, "servicing.", "defaulted_days_past_due", 120),
        repurchase_cure_days=number(servicing, "servicing.", "repurchase_cure_days", 30),
        required_reserve_amount=read.money(
            read.require(reserve, "required_amount", "reserve_account."),
            "reserve_account.required_amount",
        ),
        initial_reserve_deposit=read.money(
            read.require(reserve, "initial_deposit", "reserve_account."),
            "reserve_account.initial_deposit",
        ),
        overcollateralization_percent=oc_percent,
        overcollateralization_base=oc_base,
        overcollateralization_floor_percent=oc_floor,
        clean_up_call_percent=read.share(
            read.require(call, "pool_balance_percent_of_cutoff", "clean_up_call."),
            "clean_up_call.pool_balance_percent_of_cutoff",
        ),
        tangible_net_worth_minimum=read.money(
            read.require(covenant, "consolidated_tangible_net_worth_minimum", "servicer_covenant."),
            "servicer_covenant.consolidated_tangible_net_worth_minimum",
        ),
        floating_rate_index=str(index.get("name") or ""),
        has_receivable_count_line=bool(certificate.get("receivable_count_line", True)),
        classes=classes,
    )
    _check_dates(deal)
    declared = pool.get("initial_note_balance")
    if declared is not None:
        total = read.money(declared, "pool.initial_note_balance")
        if total != deal.initial_note_balance:
            raise DealFileError(
                f"{path}: field 'pool.initial_note_balance' ({total}) is not the sum of the class "
                f"initial balances ({deal.initial_note_balance})"
            )
    if deal.initial_note_balance > deal.initial_pool_balance:
        raise DealFileError(
            f"{path}: the class initial balances ({deal.initial_note_balance}) exceed "
            f"pool.initial_pool_balance ({deal.initial_pool_balance})"
        )
    return deal


def deals_dir() -> Path:
    return Path(os.environ.get("CAOT_DEALS_DIR") or DEFAULT_DEALS_DIR)


def load_shelf(folder: Path | None = None) -> list[Deal]:
    """Every deal file of the shelf, in the order of their Cutoff Dates."""
    folder = folder or deals_dir()
    deals = [load_deal(path) for path in sorted(folder.glob("*.yaml"))]
    if not deals:
        raise DealFileError(f"{folder}: no deal files (*.yaml)")
    seen: dict[str, Path] = {}
    for deal in deals:
        if deal.deal_id in seen:
            raise DealFileError(
                f"{deal.path}: deal_id '{deal.deal_id}' is also {seen[deal.deal_id]}'s"
            )
        seen[deal.deal_id] = deal.path
    return sorted(deals, key=lambda d: (d.cutoff_date, d.deal_id))


def shelf_deal(deal_id: str, folder: Path | None = None) -> Deal:
    for deal in load_shelf(folder):
        if deal.deal_id == deal_id:
            return deal
    raise DealFileError(f"no deal file with deal_id '{deal_id}' in {folder or deals_dir()}")
