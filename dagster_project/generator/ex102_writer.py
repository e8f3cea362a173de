"""The generated monthly tapes as SEC Form ABS-EE EX-102 asset-level XML (Schedule AL, auto loans).

Shaped like real filings (../shared/reference/abs_ee_auto_loan_fields.md): MM-DD-YYYY period dates,
MM/YYYY maturity and zero-balance dates, elements omitted where they do not apply (no
recoveries, no charge-off, no repurchase, no fees), rebates as otherPrincipalAdjustmentAmount,
recoveries net of the liquidation expenses (EX-102 reports no expense: recoveredAmount is what
the trust receives, its Liquidation Proceeds) with the same cash as repossessedProceedsAmount, as
CarMax files a new disposition, every record with its origination attributes (from
the Receivable Schedule), and a receivable that left the pool (charged off, paid off, repurchased)
repeated in every later file with zero balances, its zero-balance code and month, as CarMax's
filings do (a charge-off with its original amount). EX-102 has no transaction file.
"""

import datetime as dt
from decimal import Decimal
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

from dagster_project.generator.writers import TAPE_MONEY

NAMESPACE = "http://www.sec.gov/edgar/document/absee/autoloan/assetdata"
WHEN_ANY_MONEY = (  # EX-102 tag, generated tape column: omitted when zero
    ("actualOtherCollectedAmount", "actualOtherCollectedAmount"),
    ("otherPrincipalAdjustmentAmount", "rebateAmount"),
)
# always filed; the charge-off, recovery and repurchase amounts are written where they apply
ALWAYS_MONEY = tuple(
    (name, name)
    for name in TAPE_MONEY
    if name not in {column for _tag, column in WHEN_ANY_MONEY}
    and name not in ("chargedoffPrincipalAmount", "recoveredAmount", "liquidationExpenseAmount",
                     "repurchaseAmount")
)  # fmt: skip


def _money(cents) -> str:
    cents = int(cents)
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d}"


def _day(value) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    try:
        day = np.datetime64(value, "D").astype(dt.date)
    except ValueError:
        return None
    return None if day is None else f"{day:%m-%d-%Y}"


def _month(day: dt.date) -> str:
    return f"{day:%m/%Y}"


NEW_USED = {"new": "1", "used": "2"}  # Schedule AL 3(d)(3)


def origination_elements(schedule) -> dict[str, str]:
    """assetNumber -> the XML of its origination attributes (Schedule AL 3(c)-(e)), from the
    generator's schedule frame: months as MM/YYYY, the APR as a fraction."""
    out = {}
    for row in schedule.itertuples(index=False):
        day = lambda value: np.datetime64(value, "D").astype(dt.date)  # noqa: E731
        fields = [
            ("originationDate", _month(day(row.origination_date))),
            ("originalLoanAmount", _money(row.amount_financed_cents)),
            ("originalLoanTerm", str(int(row.original_term))),
            ("originalInterestRatePercentage", str(Decimal(int(row.apr_e6)).scaleb(-6))),
            ("interestCalculationTypeCode", "1" if row.interest_calculation_method == "simple"
             else "98"),
            ("originalFirstPaymentDate", _month(day(row.first_payment_date))),
            ("vehicleManufacturerName", row.vehicle_make),
            ("vehicleNewUsedCode", NEW_USED[row.vehicle_new_used]),
            ("vehicleModelYear", str(int(row.vehicle_model_year))),
            ("obligorCreditScore", str(int(row.obligor_credit_score))),
            ("obligorGeographicLocation", row.obligor_state),
        ]  # fmt: skip
        out[row.receivable_id] = "".join(
            f"<{tag}>{escape(str(value))}</{tag}>" for tag, value in fields
        )
    return out


class Ex102TapeWriter:
    """Writes one EX-102 file per period; remembers the receivables that left the pool to repeat
    them."""

    def __init__(self, schedule):
        self.origination = origination_elements(schedule)
        self.charged_off: dict[str, dict] = {}  # assetNumber -> its charge-off record
        self.left: dict[str, dict] = {}  # assetNumber -> its payoff or repurchase record

    def write(self, tape, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "loan_status.xml"
        period = tape.period
        begin, end = (
            f"{period.collection_period_start:%m-%d-%Y}",
            f"{period.collection_period_end:%m-%d-%Y}",
        )
        month = _month(period.collection_period_end)
        frame = tape.loan_status
        seen = set()
        with path.open("w", encoding="utf-8") as out:
            out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<assetData xmlns="{NAMESPACE}">\n')
            for row in frame.itertuples(index=False):
                seen.add(row.assetNumber)
                out.write(self._record(row, begin, end, month))
            for asset, record in (self.charged_off | self.left).items():
                if asset not in seen:  # still in the file after it left, nothing new on it
                    out.write(self._repeat(asset, record, begin, end))
            out.write("</assetData>\n")
        return path

    def _record(self, row, begin: str, end: str, month: str) -> str:
        code = row.zeroBalanceCode or None
        fields: list[tuple[str, str | None]] = [
            ("assetTypeNumber", "SPONSOR"),
            ("assetNumber", row.assetNumber),
            ("reportingPeriodBeginningDate", begin),
            ("reportingPeriodEndingDate", end),
            ("loanMaturityDate", _month(np.datetime64(row.loanMaturityDate, "D").astype(dt.date))),
            ("remainingTermToMaturityNumber", str(int(row.remainingTermToMaturityNumber))),
            *((tag, _money(getattr(row, column))) for tag, column in ALWAYS_MONEY),
            # omitted where they do not apply
            *(
                (tag, _money(getattr(row, column)) if getattr(row, column) else None)
                for tag, column in WHEN_ANY_MONEY
            ),
            ("interestPaidThroughDate", _day(row.interestPaidThroughDate)),
            ("currentDelinquencyStatus", str(int(row.currentDelinquencyStatus))),
            ("repossessedIndicator", "true" if row.repossessedIndicator else "false"),
            ("paymentExtendedNumber", str(int(row.paymentExtendedNumber))),
        ]  # fmt: skip
        if row.extensionGrantedIndicator:
            fields.append(("modificationTypeCode", "4"))
        if row.repurchaseAmount:
            fields.append(("repurchaseAmount", _money(row.repurchaseAmount)))
        charged = self.charged_off.get(row.assetNumber)
        if code == "4" and charged is None and row.chargedoffPrincipalAmount:
            charged = {
                "month": month,
                "amount": int(row.chargedoffPrincipalAmount),
                "repossessed": bool(row.repossessedIndicator),
                "paid_through": _day(row.interestPaidThroughDate),
                "maturity": _month(np.datetime64(row.loanMaturityDate, "D").astype(dt.date)),
            }
            self.charged_off[row.assetNumber] = charged
        if code in ("1", "3") and row.assetNumber not in self.left:
            self.left[row.assetNumber] = {
                "code": code,
                "month": month,
                "repossessed": False,
                "paid_through": _day(row.interestPaidThroughDate),
                "maturity": _month(np.datetime64(row.loanMaturityDate, "D").astype(dt.date)),
            }
        if code:
            fields.append(("zeroBalanceCode", code))
            effective = (charged or self.left.get(row.assetNumber) or {}).get("month", month)
            fields.append(("zeroBalanceEffectiveDate", effective))
        if charged:  # every later file repeats the original charge-off (not a new loss)
            fields.append(("chargedoffPrincipalAmount", _money(charged["amount"])))
        if row.recoveredAmount:
            net = row.recoveredAmount - row.liquidationExpenseAmount
            fields.append(("recoveredAmount", _money(net)))
            fields.append(("repossessedProceedsAmount", _money(net)))
        return _element(fields, self.origination.get(row.assetNumber, ""))

    def _repeat(self, asset: str, record: dict, begin: str, end: str) -> str:
        fields = [
            ("assetTypeNumber", "SPONSOR"),
            ("assetNumber", asset),
            ("reportingPeriodBeginningDate", begin),
            ("reportingPeriodEndingDate", end),
            ("loanMaturityDate", record["maturity"]),
            ("reportingPeriodBeginningLoanBalanceAmount", "0.00"),
            ("reportingPeriodActualEndBalanceAmount", "0.00"),
            ("totalActualAmountPaid", "0.00"),
            ("actualPrincipalCollectedAmount", "0.00"),
            ("interestPaidThroughDate", record["paid_through"]),
            ("repossessedIndicator", "true" if record["repossessed"] else "false"),
            ("zeroBalanceCode", record.get("code", "4")),
            ("zeroBalanceEffectiveDate", record["month"]),
        ]
        if "amount" in record:  # a charge-off repeats its original amount
            fields.append(("chargedoffPrincipalAmount", _money(record["amount"])))
        return _element(fields, self.origination.get(asset, ""))


def _element(fields: list[tuple[str, str | None]], origination: str = "") -> str:
    body = "".join(f"<{tag}>{escape(value)}</{tag}>" for tag, value in fields if value is not None)
    return f"  <assets>{body}{origination}</assets>\n"
