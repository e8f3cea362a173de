"""Assumption sets for projections, as data (data/scenarios.yaml): a prepayment speed (ABS or
CPR), a default rate (CDR), a loss severity, a recovery lag and the clean-up call on or off.

    scenarios:
      - {name: abs-1.3, abs: "0.013", cdr: "0", severity: "0.50", recovery_lag_months: 3,
         clean_up_call: true}

Rates are quoted decimals (exact), monthly for ABS (1.3% ABS = "0.013"), annual for CPR and CDR.
"""

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

import yaml

from dagster_project.deal import PROJECT_ROOT

DEFAULT_FILE = PROJECT_ROOT / "data" / "scenarios.yaml"
FIELDS = {"name", "abs", "cpr", "cdr", "severity", "recovery_lag_months", "clean_up_call"}


class ScenarioError(ValueError):
    """A scenario file or entry that cannot be read (the message names it and the field)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    prepayment: str  # "abs" (monthly, a share of the original number of receivables) or "cpr"
    prepayment_rate: Decimal
    cdr: Decimal  # annual default rate on the performing balance
    severity: Decimal  # share of a defaulted balance lost
    recovery_lag_months: int  # months from default to the recovery of the rest
    clean_up_call: bool  # 9.1(a): exercised on the first date the option exists

    def with_cdr(self, cdr: Decimal, name: str | None = None) -> "Scenario":
        return Scenario(
            name or self.name,
            self.prepayment,
            self.prepayment_rate,
            cdr,
            self.severity,
            self.recovery_lag_months,
            self.clean_up_call,
        )


def _rate(entry: dict, field: str, where: str, default: str | None = None) -> Decimal:
    raw = entry.get(field, default)
    if isinstance(raw, float):
        raise ScenarioError(f"{where}: '{field}' must be a quoted decimal, not {raw!r}")
    try:
        value = Decimal(str(raw))
    except (InvalidOperation, TypeError) as error:
        raise ScenarioError(f"{where}: '{field}' is not a decimal: {raw!r}") from error
    if not Decimal(0) <= value <= Decimal(1):
        raise ScenarioError(f"{where}: '{field}' must be between 0 and 1, got {value}")
    return value


def scenario(entry: dict, where: str = "scenario") -> Scenario:
    unknown = set(entry) - FIELDS
    if unknown:
        raise ScenarioError(f"{where}: unknown fields {sorted(unknown)}")
    if "name" not in entry:
        raise ScenarioError(f"{where}: missing 'name'")
    where = f"{where} {entry['name']!r}"
    if ("abs" in entry) == ("cpr" in entry):
        raise ScenarioError(f"{where}: give one prepayment speed, 'abs' or 'cpr'")
    kind = "abs" if "abs" in entry else "cpr"
    lag = entry.get("recovery_lag_months", 0)
    if not isinstance(lag, int) or lag < 0:
        raise ScenarioError(f"{where}: 'recovery_lag_months' must be a whole number >= 0")
    return Scenario(
        name=str(entry["name"]),
        prepayment=kind,
        prepayment_rate=_rate(entry, kind, where),
        cdr=_rate(entry, "cdr", where, "0"),
        severity=_rate(entry, "severity", where, "0"),
        recovery_lag_months=lag,
        clean_up_call=bool(entry.get("clean_up_call", True)),
    )


def load_scenarios(path: Path = DEFAULT_FILE) -> list[Scenario]:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ScenarioError(f"{path}: cannot read the scenarios: {error}") from error
    entries = (raw or {}).get("scenarios")
    if not entries:
        raise ScenarioError(f"{path}: no 'scenarios' list")
    out = [scenario(entry, f"{path}: scenario {n}") for n, entry in enumerate(entries, 1)]
    names = [s.name for s in out]
    if len(set(names)) < len(names):
        raise ScenarioError(f"{path}: scenario names must be unique")
    return out
