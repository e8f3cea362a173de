"""SEC Form ABS-EE asset-level data (EX-102, Schedule AL Item 3, auto loans) as a monthly tape.

The real files are 150-350 MB: they are read with a streaming parser that clears every record
once converted, so memory stays flat whatever the size. Each `assets` record becomes one row of
the loan-level tape (the columns of schemas.LOAN_STATUS), written as CSV and then validated and
loaded exactly like a CSV delivery. The traps of real files, and what is done about each:

- an omitted element is NULL, never 0 (issuers omit what does not apply);
- `zeroBalanceCode`, `modificationTypeCode` and `subvented` repeat inside one record: every value
  is kept (`|`-joined), and the primary zero-balance code is chosen by precedence 3, 4, 1, others;
- dates come as MM-DD-YYYY (period dates, interest paid through) and MM/YYYY (origination,
  maturity, zero-balance effective date: read as the first day of the month);
- rates are fractions (0.0596), kept as they are;
- a charged-off receivable stays in every later file with its original charge-off amount: the
  charge-off counts only in the month of its zero-balance effective date (later rows carry 0), so
  it is never a new loss again; its recoveries keep flowing on those rows;
- a prepaid receivable appears once, with zero-balance code 1, and then drops out;
- several pool variants filed for one period (CarMax's "largepool"/"smallpool", "lp"/"sp"/"mp")
  are told apart by file name; a delivery with more than one must name the one to load.

EX-102 has no payment-transaction file: such receivable-periods take their balances, interest,
principal and fees from the tape (`sourceFormat` = ex102) and are marked "not independently
recomputed" in the warehouse (docs/tape_fields.md).
"""

import csv
import datetime as dt
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path

NAMESPACE = "http://www.sec.gov/edgar/document/absee/autoloan/assetdata"
REPEATED = ("zeroBalanceCode", "modificationTypeCode", "subvented")
ZERO_BALANCE_PRECEDENCE = ("3", "4", "1")  # repurchased, charged off, prepaid; then any other
VARIANT = re.compile(r"(largepool|smallpool|mediumpool|[_-](lp|sp|mp))", re.IGNORECASE)

# tape column -> EX-102 tag (the tag's value is copied, converted where its format needs it)
COPIED = {
    "assetNumber": "assetNumber",
    "reportingPeriodBeginningLoanBalanceAmount": "reportingPeriodBeginningLoanBalanceAmount",
    "reportingPeriodActualEndBalanceAmount": "reportingPeriodActualEndBalanceAmount",
    "reportingPeriodScheduledPaymentAmount": "reportingPeriodScheduledPaymentAmount",
    "totalActualAmountPaid": "totalActualAmountPaid",
    "actualInterestCollectedAmount": "actualInterestCollectedAmount",
    "actualPrincipalCollectedAmount": "actualPrincipalCollectedAmount",
    "actualOtherCollectedAmount": "actualOtherCollectedAmount",
    "rebateAmount": "otherPrincipalAdjustmentAmount",
    "currentDelinquencyStatus": "currentDelinquencyStatus",
    "recoveredAmount": "recoveredAmount",
    "repossessedIndicator": "repossessedIndicator",
    "repurchaseAmount": "repurchaseAmount",
    "paymentExtendedNumber": "paymentExtendedNumber",
    "remainingTermToMaturityNumber": "remainingTermToMaturityNumber",
    "servicerAdvancedAmount": "servicerAdvancedAmount",
    "repossessedProceedsAmount": "repossessedProceedsAmount",
}
DAY_DATES = {  # MM-DD-YYYY
    "reportingPeriodBeginningDate": "reportingPeriodBeginningDate",
    "reportingPeriodEndingDate": "reportingPeriodEndingDate",
    "interestPaidThroughDate": "interestPaidThroughDate",
}
MONTH_DATES = {  # MM/YYYY
    "loanMaturityDate": "loanMaturityDate",
    "zeroBalanceEffectiveDate": "zeroBalanceEffectiveDate",
}


class Ex102Error(ValueError):
    """An EX-102 file that cannot be read as asset-level data."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def iter_assets(path: Path) -> Iterator[dict]:
    """Every `assets` record as {tag: text} ({tag: [texts]} for repeated tags), streaming."""
    try:
        context = ET.iterparse(path, events=("start", "end"))
        root = None
        for event, element in context:
            if root is None:
                root = element
                if _local(root.tag) != "assetData":
                    raise Ex102Error(f"{path}: root element is {_local(root.tag)}, not assetData")
            if event != "end" or _local(element.tag) != "assets":
                continue
            record: dict = {}
            for child in element:
                name, text = _local(child.tag), (child.text or "").strip()
                if name in REPEATED:
                    record.setdefault(name, []).append(text)
                else:
                    record[name] = text
            yield record
            element.clear()
            root.clear()  # drop the finished records: memory stays flat
    except ET.ParseError as error:
        raise Ex102Error(f"{path}: not well-formed XML ({error})") from error


def _date(text: str | None, form: str) -> str | None:
    """ISO date; text in another form passes through, and the row checks name its row."""
    if not text:
        return None
    try:
        return dt.datetime.strptime(text, form).date().isoformat()
    except ValueError:
        return text


def _day(text: str | None) -> str | None:
    return _date(text, "%m-%d-%Y")


def _month(text: str | None) -> str | None:
    return _date(text, "%m/%Y")


def _primary_zero_balance_code(codes: list[str]) -> str | None:
    codes = [c for c in codes if c]
    for code in ZERO_BALANCE_PRECEDENCE:
        if code in codes:
            return code
    return codes[0] if codes else None


def _status(record: dict, code: str | None) -> str:
    """The tape's loanStatus, derived from the record (EX-102 has no status element)."""
    if code == "3":
        return "purchased"
    if code == "4":
        return "liquidated" if record.get("repossessedIndicator") == "true" else "charged_off"
    if code == "1":
        return "paid_in_full"
    if record.get("repossessedIndicator") == "true":
        return "repossessed"
    days = record.get("currentDelinquencyStatus")
    return "delinquent" if days and int(days) > 0 else "current"


def tape_row(record: dict) -> dict:
    """One EX-102 record as a row of the loan-level tape (None where the element is omitted)."""
    row = {column: record.get(tag) or None for column, tag in COPIED.items()}
    row |= {column: _day(record.get(tag)) for column, tag in DAY_DATES.items()}
    row |= {column: _month(record.get(tag)) for column, tag in MONTH_DATES.items()}
    codes = record.get("zeroBalanceCode", [])
    code = _primary_zero_balance_code(codes)
    period_month = (row["reportingPeriodEndingDate"] or "")[:7]
    effective_month = (row["zeroBalanceEffectiveDate"] or "")[:7]
    # a charge-off counts in the month it happened; later files repeat it: not a new loss
    charge_off_month = code == "4" and effective_month == period_month
    charged_off = record.get("chargedoffPrincipalAmount") or None
    row["chargedoffPrincipalAmount"] = (
        charged_off if code != "4" or charge_off_month or charged_off is None else "0.00"
    )
    recovered, net = row["recoveredAmount"], row.pop("repossessedProceedsAmount")
    # Liquidation Proceeds are net of expenses (Art. I): the expense is gross less net
    try:
        expense = str(Decimal(recovered) - Decimal(net)) if recovered and net else None
    except InvalidOperation:
        expense = None  # a malformed amount: the row checks name it
    row["liquidationExpenseAmount"] = expense if expense else ("0.00" if recovered else None)
    row["repossessedProceedsAmount"] = net
    row["loanStatus"] = _status(record, code)
    row["zeroBalanceCode"] = code
    row["zeroBalanceCodes"] = "|".join(codes) or None
    modifications = record.get("modificationTypeCode", [])
    row["modificationTypeCodes"] = "|".join(modifications) or None
    row["subventedCodes"] = "|".join(record.get("subvented", [])) or None
    row["extensionGrantedIndicator"] = "true" if "4" in modifications else "false"
    row["obligorBankruptcyIndicator"] = None  # not an EX-102 element
    row["repossessionDate"] = None  # not an EX-102 element
    row["sourceFormat"] = "ex102"
    return row


def choose_file(files: list[Path], variant: str | None) -> Path:
    """The EX-102 file of a delivery; several pool variants need `variant` to choose."""
    if len(files) == 1 and variant is None:
        return files[0]
    if variant is None:
        raise Ex102Error(
            f"{files[0].parent}: several EX-102 files ({', '.join(f.name for f in files)}); "
            "name the pool variant to load (CAOT_EX102_VARIANT)"
        )
    chosen = [
        f for f in files if (m := VARIANT.search(f.stem)) and variant.lower() in m.group(0).lower()
    ]
    if len(chosen) != 1:
        raise Ex102Error(
            f"{files[0].parent}: pool variant {variant!r} matches {len(chosen)} of "
            f"{', '.join(f.name for f in files)}"
        )
    return chosen[0]


def convert(path: Path, out: Path, columns: list[str]) -> int:
    """Write the tape CSV of `path` to `out` in `columns` order; return the number of records."""
    count = 0
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for record in iter_assets(path):
            row = tape_row(record)
            writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
            count += 1
    return count
