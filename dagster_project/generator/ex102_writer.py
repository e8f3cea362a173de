"""The generated monthly tapes as SEC Form ABS-EE EX-102 asset-level XML (Schedule AL, auto loans).

Shaped like real filings (../shared/reference/abs_ee_auto_loan_fields.md): MM-DD-YYYY period dates,
MM/YYYY maturity and zero-balance dates, elements omitted where they do not apply (no
recoveries, no charge-off, no repurchase, no fees), rebates as otherPrincipalAdjustmentAmount, net
repossession proceeds beside gross recoveries, and a charged-off receivable repeated in every
later file with its original charge-off amount and month. EX-102 has no transaction file.
"""

import datetime as dt
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


class Ex102TapeWriter:
    """Writes one EX-102 file per period; remembers charged-off receivables to repeat them."""

    def __init__(self):
        self.charged_off: dict[str, dict] = {}  # assetNumber -> its charge-off record

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
            for asset, record in self.charged_off.items():
                if asset not in seen:  # still in the file after charge-off, nothing new on it
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
        if code:
            fields.append(("zeroBalanceCode", code))
            fields.append(("zeroBalanceEffectiveDate", charged["month"] if charged else month))
        if charged:  # every later file repeats the original charge-off (not a new loss)
            fields.append(("chargedoffPrincipalAmount", _money(charged["amount"])))
        if row.recoveredAmount:
            fields.append(("recoveredAmount", _money(row.recoveredAmount)))
            net = row.recoveredAmount - row.liquidationExpenseAmount
            fields.append(("repossessedProceedsAmount", _money(net)))
        return _element(fields)

    def _repeat(self, asset: str, record: dict, begin: str, end: str) -> str:
        return _element(
            [
                ("assetTypeNumber", "SPONSOR"),
                ("assetNumber", asset),
                ("reportingPeriodBeginningDate", begin),
                ("reportingPeriodEndingDate", end),
                ("loanMaturityDate", record["maturity"]),
                ("reportingPeriodBeginningLoanBalanceAmount", "0.00"),
                ("reportingPeriodActualEndBalanceAmount", "0.00"),
                ("interestPaidThroughDate", record["paid_through"]),
                ("repossessedIndicator", "true" if record["repossessed"] else "false"),
                ("zeroBalanceCode", "4"),
                ("zeroBalanceEffectiveDate", record["month"]),
                ("chargedoffPrincipalAmount", _money(record["amount"])),
            ]
        )


def _element(fields: list[tuple[str, str | None]]) -> str:
    body = "".join(f"<{tag}>{escape(value)}</{tag}>" for tag, value in fields if value is not None)
    return f"  <assets>{body}</assets>\n"
