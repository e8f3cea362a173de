"""The deal file: every term of the agreement the computations need, read once, validated.

A second trust of the same shelf runs by pointing CAOT_DEAL_FILE at its own deal file.
"""

import datetime as dt
import os
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml

from dagster_project.money import round_cents, to_decimal

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DEAL_FILE = PROJECT_ROOT / "data" / "deals" / "caot_2015_4.yaml"
DAY_COUNTS = ("actual/360", "30/360")
RATE_TYPES = ("fixed", "floating")


class DealFileError(ValueError):
    """A deal file that is missing a term or holds a malformed one."""


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
    trust_name: str
    deal_id: str
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
    clean_up_call_percent: Decimal
    tangible_net_worth_minimum: Decimal
    classes: tuple[NoteClass, ...]

    @property
    def initial_note_balance(self) -> Decimal:
        return sum((c.initial_balance for c in self.classes), Decimal("0"))

    @property
    def overcollateralization_target(self) -> Decimal:
        # Art. I "Overcollateralization Target Amount": 0.50% of the cutoff Pool Balance, in cents
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

    def term_rows(self) -> list[tuple[str, str, str]]:
        """(term, value, section) rows for the warehouse table raw.deal_terms."""
        return [
            ("trust_name", self.trust_name, "preamble"),
            ("deal_id", self.deal_id, "deal file"),
            ("cutoff_date", self.cutoff_date.isoformat(), 'Art. I "Cutoff Date"'),
            ("closing_date", self.closing_date.isoformat(), 'Art. I "Closing Date"'),
            (
                "first_determination_date",
                self.first_determination_date.isoformat(),
                'Art. I "Determination Date"',
            ),
            (
                "first_distribution_date",
                self.first_distribution_date.isoformat(),
                'Art. I "Distribution Date"',
            ),
            (
                "final_scheduled_maturity_date",
                self.final_scheduled_maturity_date.isoformat(),
                'Art. I "Final Scheduled Maturity Date"',
            ),
            ("initial_pool_balance", str(self.initial_pool_balance), "trust report (cutoff)"),
            (
                "initial_note_balance",
                str(self.initial_note_balance),
                'Art. I "Initial Note Balance"',
            ),
            ("servicing_rate", str(self.servicing_rate), 'Art. I "Servicing Rate"; 3.8'),
            ("successor_transition_cap", str(self.successor_transition_cap), "Exhibit A line 28"),
            (
                "defaulted_days_past_due",
                str(self.defaulted_days_past_due),
                'Art. I "Defaulted Receivable"',
            ),
            ("repurchase_cure_days", str(self.repurchase_cure_days), "2.4"),
            (
                "required_reserve_amount",
                str(self.required_reserve_amount),
                'Art. I "Required Reserve Account Amount"',
            ),
            (
                "initial_reserve_deposit",
                str(self.initial_reserve_deposit),
                'Art. I "Initial Reserve Account Deposit"',
            ),
            (
                "overcollateralization_target_amount",
                str(self.overcollateralization_target),
                'Art. I "Overcollateralization Target Amount"',
            ),
            ("clean_up_call_percent", str(self.clean_up_call_percent), "9.1(a)"),
            (
                "tangible_net_worth_minimum",
                str(self.tangible_net_worth_minimum),
                'Art. I "Special Unrated Servicer Tangible Net Worth Event"',
            ),
        ]


def _require(mapping: dict, key: str, where: str, path: Path):
    if not isinstance(mapping, dict) or key not in mapping or mapping[key] is None:
        raise DealFileError(f"{path}: missing required field '{where}{key}'")
    return mapping[key]


def _date(value, field: str, path: Path) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as error:
        raise DealFileError(
            f"{path}: field '{field}' is not a date (YYYY-MM-DD): {value!r}"
        ) from error


def _decimal(value, field: str, path: Path) -> Decimal:
    if isinstance(value, float):
        raise DealFileError(
            f"{path}: field '{field}' must be a quoted decimal string, got {value!r}"
        )
    try:
        return to_decimal(value)
    except Exception as error:
        raise DealFileError(f"{path}: field '{field}' is not a decimal: {value!r}") from error


def _int(value, field: str, path: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise DealFileError(f"{path}: field '{field}' is not an integer: {value!r}")
    try:
        return int(value)
    except ValueError as error:
        raise DealFileError(f"{path}: field '{field}' is not an integer: {value!r}") from error


def _note_class(raw: dict, index: int, path: Path) -> NoteClass:
    where = f"classes[{index}]."

    def req(key):
        return _require(raw, key, where, path)

    rate_type = req("rate_type")
    if rate_type not in RATE_TYPES:
        raise DealFileError(f"{path}: field '{where}rate_type' must be one of {RATE_TYPES}")
    day_count = req("day_count")
    if day_count not in DAY_COUNTS:
        raise DealFileError(f"{path}: field '{where}day_count' must be one of {DAY_COUNTS}")
    if str(req("tier")) not in ("A", "B", "C", "D"):
        raise DealFileError(
            f"{path}: field '{where}tier' must be A, B, C or D (Priority, Secondary, Tertiary "
            "or Quaternary Principal Distributable Amount)"
        )
    rate = _decimal(req("rate"), where + "rate", path) if rate_type == "fixed" else None
    spread = _decimal(req("spread"), where + "spread", path) if rate_type == "floating" else None
    first = raw.get("first_period_interest")
    return NoteClass(
        class_id=str(req("class_id")),
        label=str(raw.get("label") or f"Class {req('class_id')}"),
        tier=str(req("tier")),
        principal_order=_int(req("principal_order"), where + "principal_order", path),
        initial_balance=_decimal(req("initial_balance"), where + "initial_balance", path),
        rate_type=rate_type,
        rate=rate,
        spread=spread,
        day_count=day_count,
        first_period_interest=None
        if first is None
        else _decimal(first, where + "first_period_interest", path),
        final_distribution_date=_date(
            req("final_distribution_date"), where + "final_distribution_date", path
        ),
    )


def load_deal(path: str | Path | None = None) -> Deal:
    """Read and validate a deal file; errors name the file and the field."""
    path = Path(path or os.environ.get("CAOT_DEAL_FILE") or DEFAULT_DEAL_FILE)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise DealFileError(f"{path}: deal file not found") from error
    except yaml.YAMLError as error:
        raise DealFileError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(raw, dict):
        raise DealFileError(f"{path}: the deal file must be a YAML mapping")

    def section(name):
        value = _require(raw, name, "", path)
        if not isinstance(value, dict):
            raise DealFileError(f"{path}: field '{name}' must be a mapping")
        return value

    dates, pool, servicing = section("dates"), section("pool"), section("servicing")
    reserve, oc = section("reserve_account"), section("overcollateralization")
    call, covenant = section("clean_up_call"), section("servicer_covenant")
    calendar = raw.get("calendar") or {}
    raw_classes = _require(raw, "classes", "", path)
    if not isinstance(raw_classes, list) or not raw_classes:
        raise DealFileError(f"{path}: field 'classes' must be a non-empty list")
    classes = tuple(_note_class(item, i, path) for i, item in enumerate(raw_classes))
    ids = [c.class_id for c in classes]
    if len(set(ids)) != len(ids):
        raise DealFileError(f"{path}: field 'classes' has duplicate class_id values: {ids}")
    orders = [c.principal_order for c in classes]
    if orders != sorted(orders):
        raise DealFileError(
            f"{path}: classes must be listed in principal_order (certificate order)"
        )

    def d(key, where, block):
        return _date(_require(block, key, where, path), where + key, path)

    def money(key, where, block):
        return _decimal(_require(block, key, where, path), where + key, path)

    def integer(key, where, block):
        return _int(_require(block, key, where, path), where + key, path)

    return Deal(
        path=path,
        trust_name=str(_require(raw, "trust_name", "", path)),
        deal_id=str(_require(raw, "deal_id", "", path)),
        cutoff_date=d("cutoff_date", "dates.", dates),
        closing_date=d("closing_date", "dates.", dates),
        first_determination_date=d("first_determination_date", "dates.", dates),
        first_distribution_date=d("first_distribution_date", "dates.", dates),
        final_scheduled_maturity_date=d("final_scheduled_maturity_date", "dates.", dates),
        determination_day_of_month=integer("determination_day_of_month", "dates.", dates),
        distribution_day_of_month=integer("distribution_day_of_month", "dates.", dates),
        fiscal_year_end_month=_int(
            dates.get("fiscal_year_end_month", 2), "dates.fiscal_year_end_month", path
        ),
        business_day_rule=str(calendar.get("business_day_rule", "federal_reserve")),
        initial_pool_balance=money("initial_pool_balance", "pool.", pool),
        initial_receivable_count=_int(
            pool.get("initial_receivable_count", 0), "pool.initial_receivable_count", path
        ),
        new_vehicle_share=_decimal(
            pool.get("new_vehicle_share", "0"), "pool.new_vehicle_share", path
        ),
        weighted_average_remaining_term=_decimal(
            pool.get("weighted_average_remaining_term", "0"),
            "pool.weighted_average_remaining_term",
            path,
        ),
        eligibility=dict(raw.get("eligibility") or {}),
        servicing_rate=money("servicing_rate", "servicing.", servicing),
        successor_transition_cap=money("successor_transition_cap", "servicing.", servicing),
        defaulted_days_past_due=_int(
            servicing.get("defaulted_days_past_due", 120), "servicing.defaulted_days_past_due", path
        ),
        repurchase_cure_days=_int(
            servicing.get("repurchase_cure_days", 30), "servicing.repurchase_cure_days", path
        ),
        required_reserve_amount=money("required_amount", "reserve_account.", reserve),
        initial_reserve_deposit=money("initial_deposit", "reserve_account.", reserve),
        overcollateralization_percent=money(
            "target_percent_of_cutoff_pool_balance", "overcollateralization.", oc
        ),
        clean_up_call_percent=money("pool_balance_percent_of_cutoff", "clean_up_call.", call),
        tangible_net_worth_minimum=money(
            "consolidated_tangible_net_worth_minimum", "servicer_covenant.", covenant
        ),
        classes=classes,
    )
