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
  charge-off counts once, in the period whose balances show it (the month of its zero-balance
  effective date, or the later file that first reports it while the receivable still had a
  balance at the period's beginning: CarMax reports some charge-offs a month or more after their
  effective month); later rows carry 0, so it is never a new loss again; its recoveries keep
  flowing on those rows;
- a paid-off or repurchased receivable may stay in later files with zero balances and its original
  zero-balance code and month (CarMax's do; the SEC's schema lets an issuer drop it): such a repeat
  carries nothing, and a receivable is prepaid, charged off or repurchased once, in the period
  whose balances show it (a payoff's cash can arrive in the period after its effective month);
- amounts can be negative: CarMax reports net principal increases (a returned payment, a
  reinstated charge-off) as a negative `otherPrincipalAdjustmentAmount`, an overpaid receivable as a
  negative balance (a credit balance) and a reversed recovery as a negative `recoveredAmount`;
  these columns keep their sign (schemas.py `signed_in_ex102`), and the warehouse counts a credit
  balance as a zero Principal Balance (the overpayment is the obligor's, not the pool's);
- `repossessedProceedsAmount` is the disposition's proceeds as filed, repeated in every later file
  (retained history, not the month's cash) and often the same cash as `recoveredAmount`: it is kept
  as filed and never used as an amount of the period; Liquidation Proceeds are `recoveredAmount`
  (EX-102 reports no liquidation expense);
- booleans are xs:boolean: "true" or "1";
- a filing comes with other exhibits (EX-103, the issuer's field notes, is also XML): only files
  whose root element is `assetData` are asset-level data;
- several pool variants filed for one period (CarMax's "largepool"/"smallpool", "lp"/"sp"/"mp")
  are told apart by file name; a delivery with more than one must name the one to load.

EX-102 has no payment-transaction file: such receivable-periods take their balances, interest,
principal and fees from the tape (`sourceFormat` = ex102) and are marked "not independently
recomputed" in the warehouse (docs/tape_fields.md).

A filing can also stand in for the Receivable Schedule (`schedule_row`): the receivables with a
balance at the beginning of its reporting period are the pool as of the day before, with their
origination attributes as filed (docs/public_filings.md says which fields and which Section 2.3
representations the public data can and cannot show).
"""

import calendar
import csv
import datetime as dt
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

from dagster_project.ingestion.schemas import LOAN_STATUS, RECEIVABLE_SCHEDULE, FileSchema

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


XS_TRUE = ("true", "1")  # xs:boolean's two spellings of true


def _boolean(text: str | None) -> str | None:
    """An xs:boolean as the tape writes it ("true"/"false"); other text passes through and the
    row checks name it."""
    if not text:
        return None
    return "true" if text in XS_TRUE else "false" if text in ("false", "0") else text


def is_asset_data(path: Path) -> bool:
    """Whether the XML file `path` is asset-level data (its root element is `assetData`), not
    another exhibit of the filing; a file that is not well-formed counts as asset data, so that
    reading it names the error."""
    try:
        for _event, element in ET.iterparse(path, events=("start",)):
            return _local(element.tag) == "assetData"
    except ET.ParseError:
        return True
    return True


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
                space = root.tag[1:].split("}", 1)[0] if root.tag.startswith("{") else None
                if space not in (None, NAMESPACE):  # another asset class's Schedule AL
                    raise Ex102Error(
                        f"{path}: asset data in the namespace {space}, not auto loans ({NAMESPACE})"
                    )
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
    repossessed = record.get("repossessedIndicator") in XS_TRUE
    if code == "4":
        return "liquidated" if repossessed else "charged_off"
    if code == "1":
        return "paid_in_full"
    if repossessed:
        return "repossessed"
    return "delinquent" if _positive(record.get("currentDelinquencyStatus")) else "current"


def _positive(number: str | None) -> bool:
    try:
        return number is not None and Decimal(number) > 0
    except InvalidOperation:
        return False  # a malformed number (text, NaN): the row checks name it


def tape_row(record: dict) -> dict:
    """One EX-102 record as a row of the loan-level tape (None where the element is omitted)."""
    row = {column: record.get(tag) or None for column, tag in COPIED.items()}
    row |= {column: _day(record.get(tag)) for column, tag in DAY_DATES.items()}
    row |= {column: _month(record.get(tag)) for column, tag in MONTH_DATES.items()}
    codes = record.get("zeroBalanceCode", [])
    code = _primary_zero_balance_code(codes)
    period_month = (row["reportingPeriodEndingDate"] or "")[:7]
    effective_month = (row["zeroBalanceEffectiveDate"] or "")[:7]
    # a charge-off counts once, in the period whose balances show it: its effective month, or a
    # later file that first reports it while the receivable had a balance at the period's start;
    # the files after it repeat it: not a new loss
    charge_off_now = code == "4" and (
        effective_month == period_month
        or _positive(row["reportingPeriodBeginningLoanBalanceAmount"])
    )
    charged_off = record.get("chargedoffPrincipalAmount") or None
    row["chargedoffPrincipalAmount"] = (
        charged_off if code != "4" or charge_off_now or charged_off is None else "0.00"
    )
    # Liquidation Proceeds (Art. I) are recoveredAmount: EX-102 reports no liquidation expense,
    # and repossessedProceedsAmount is retained history (kept as filed, module docstring)
    row["liquidationExpenseAmount"] = None
    row["repossessedIndicator"] = _boolean(row["repossessedIndicator"])
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


def _month_end(text: str | None) -> str | None:
    """The last day of an MM/YYYY month (text in another form passes through)."""
    first = _month(text)
    if not first or len(first) != 10 or first[4] != "-":
        return first
    try:
        year, month = int(first[:4]), int(first[5:7])
        return dt.date(year, month, calendar.monthrange(year, month)[1]).isoformat()
    except ValueError:
        return first  # not a date: the row checks name it


def _months_between(start: str | None, end: str | None) -> int | None:
    try:
        a, b = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    except (TypeError, ValueError):
        return None
    return (b.year - a.year) * 12 + b.month - a.month


def level_payment(amount: str, apr: str, term: str) -> str | None:
    """The level monthly payment that amortises `amount` over `term` months at `apr` (a fraction),
    rounded half up to the cent: A * r / (1 - (1 + r)^-n), r = apr / 12, in Decimal."""
    try:
        a, r, n = Decimal(amount), Decimal(apr) / 12, int(term)
        if n <= 0:
            return None
        payment = a / n if r == 0 else a * r / (1 - (1 + r) ** -n)
        return str(payment.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    except (TypeError, ValueError, ArithmeticError):  # Decimal's errors are ArithmeticErrors
        return None  # the filed values are checked (and named) as the schedule's row


def _score(text: str | None) -> str | None:
    """The credit score as filed (a bureau average can be fractional: 800.5); "None" or 0, which
    some issuers file for an obligor without a score, is no score (NULL)."""
    try:
        return text if text and Decimal(text) > 0 else None
    except InvalidOperation:
        return None if text.strip().lower() in ("none", "n/a", "na") else text


NEW_USED = {"1": "new", "2": "used"}  # Schedule AL 3(d)(3); another code is kept and rejected
SIMPLE_INTEREST = "1"  # Schedule AL 3(c)(7) interestCalculationTypeCode 1: simple interest


def schedule_row(record: dict) -> dict | None:
    """A receivable of the pool at the start of the filing's reporting period, in the columns of
    the Receivable Schedule; None when it has no balance then (it left the pool before).

    From the filing: ids, origination month (read as its last day, so 2.3(t) flags a receivable
    only when its whole month is on or before the bound), first payment and maturity months
    (their first day), Amount Financed, APR, original term, the beginning balance as the
    Principal Balance, new/used, model year, make, state, credit score (may be fractional).
    Remaining term: the months from the Cutoff Date's month to the maturity month (the filed
    remainingTermToMaturityNumber is as of the period end, and omitted on paid-off receivables).
    Scheduled payment: as filed, or where omitted (paid off in the period) the level payment of
    the Amount Financed.
    Not in any public field, so NULL (docs/public_filings.md): the last payment date, days past
    due, payments made, bankruptcy, government obligor and repossession as of the Cutoff Date."""
    try:
        if Decimal(record.get("reportingPeriodBeginningLoanBalanceAmount") or "0") <= 0:
            return None
    except InvalidOperation:
        pass  # a malformed balance: the row checks name it
    start = _day(record.get("reportingPeriodBeginningDate"))
    try:  # the Cutoff Date: the day before the filing's period
        cutoff = (dt.date.fromisoformat(start) - dt.timedelta(days=1)).isoformat()
    except (TypeError, ValueError):
        cutoff = None  # a malformed date: the tape's row checks name it
    maturity = _month(record.get("loanMaturityDate"))
    amount, apr, term = (
        record.get("originalLoanAmount"),
        record.get("originalInterestRatePercentage"),
        record.get("originalLoanTerm"),
    )
    method = record.get("interestCalculationTypeCode")
    remaining = _months_between(cutoff, maturity)
    return {
        "receivable_id": record.get("assetNumber") or None,
        "origination_date": _month_end(record.get("originationDate")),
        "first_payment_date": _month(record.get("originalFirstPaymentDate")),
        "maturity_date": maturity,
        "last_payment_date": None,
        "amount_financed": amount or None,
        "apr": apr or None,
        "original_term": term or None,
        "remaining_term": None if remaining is None else str(max(remaining, 0)),
        "scheduled_payment": record.get("reportingPeriodScheduledPaymentAmount")
        or level_payment(amount, apr, term),
        "principal_balance": record.get("reportingPeriodBeginningLoanBalanceAmount") or None,
        "vehicle_new_used": NEW_USED.get(record.get("vehicleNewUsedCode") or "")
        or record.get("vehicleNewUsedCode")
        or None,
        "vehicle_model_year": record.get("vehicleModelYear") or None,
        "vehicle_make": (record.get("vehicleManufacturerName") or "").strip() or None,
        "obligor_name": None,
        "obligor_street_address": None,
        "obligor_state": record.get("obligorGeographicLocation") or None,
        "obligor_credit_score": _score(record.get("obligorCreditScore")),
        "days_past_due": None,
        "payments_made": None,
        "interest_calculation_method": "simple" if method == SIMPLE_INTEREST else (method or None),
        "is_bankrupt": None,
        "is_repossessed": None,
        "is_government_obligor": None,
        "source_format": "ex102",
    }


ROWS = {LOAN_STATUS.kind: tape_row, RECEIVABLE_SCHEDULE.kind: schedule_row}


def convert(path: Path, out: Path, schema: FileSchema) -> int:
    """Write the rows of `schema` (the tape, or the schedule) that the filing `path` gives to
    `out` as CSV in the schema's column order; return the number of rows written."""
    row_of = ROWS[schema.kind]
    count = 0
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=schema.names, extrasaction="ignore")
        writer.writeheader()
        for record in iter_assets(path):
            row = row_of(record)
            if row is None:
                continue
            writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
            count += 1
    return count


def reporting_period(path: Path) -> tuple[str, str]:
    """(beginning, ending) ISO dates of the filing's reporting period, from its first record."""
    for record in iter_assets(path):
        begin = _day(record.get("reportingPeriodBeginningDate"))
        end = _day(record.get("reportingPeriodEndingDate"))
        if not begin or not end:
            raise Ex102Error(f"{path}: the first record has no reporting period dates")
        return begin, end
    raise Ex102Error(f"{path}: no assets records")
