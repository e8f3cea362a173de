"""Where a shelf's files are delivered, and which of them make a delivery.

    <inputs>/tangible_net_worth.csv                    the servicer's parent's figure (the shelf)
    <inputs>/<deal_id>/receivable_schedule.csv         Schedule 1, delivered at closing (or
                                                       receivable_schedule.xml: an EX-102 filing)
    <inputs>/<deal_id>/index_rates.csv                 the floating index per accrual period
    <inputs>/<deal_id>/trust_account_earnings.csv      Collection and Reserve Account earnings
    <inputs>/<deal_id>/exception_decisions.csv         optional: the servicer's decisions on the
                                                       auditor's exceptions (waived, reopened)
    <inputs>/<deal_id>/deliveries/<YYYY-MM>/           one Collection Period's tapes

A period's folder holds the loan-level tape and its payment transactions (`loan_status` and
`payment_transactions`, each `.csv`, `.csv.gz` or `.parquet`) or one SEC EX-102 XML file. The
inbox (data/inbox/, CAOT_INBOX_DIR) has the same <deal_id>/<YYYY-MM>/ folders.
"""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from dagster_project import warehouse
from dagster_project.business_calendar import payment_periods
from dagster_project.deal import Deal
from dagster_project.ingestion import ex102, schemas

FORMATS = ("csv", "csv.gz", "parquet")  # an EX-102 delivery is any *.xml (tape_files)
PERIOD_NAME = re.compile(r"\d{4}-\d{2}")


def inbox_dir() -> Path:
    return Path(os.environ.get("CAOT_INBOX_DIR") or warehouse.DATA_DIR / "inbox")


class AmbiguousDelivery(ValueError):
    """A period's folder holding the same file in more than one format."""


def trust_dir(inputs: Path, deal_id: str) -> Path:
    return Path(inputs) / deal_id


def not_trusts(folder: Path, deals) -> list[Path]:
    """The folders under `folder` (the inputs or the inbox, one folder per trust) named for no
    trust of the shelf: their deliveries are not loaded, and the command line and the sensor say
    so."""
    known = {deal.deal_id for deal in deals}
    return sorted(
        child
        for child in (folder.iterdir() if folder.is_dir() else [])
        if child.is_dir() and child.name not in known
    )


def find_file(folder: Path, stem: str) -> Path:
    """The delivered file `stem.<format>` in `folder` (the first format present)."""
    for ext in FORMATS:
        candidate = folder / f"{stem}.{ext}"
        if candidate.exists():
            return candidate
    return folder / f"{stem}.csv"  # missing: validation reports it by this name


def tape_files(folder: Path) -> list[tuple[schemas.FileSchema, Path]]:
    """A period's delivery: the tape and its transactions (CSV or Parquet), or one SEC EX-102
    XML file (no transactions; of several pool variants, the one CAOT_EX102_VARIANT names). The
    filing's other exhibits (EX-103 is XML too) are not asset-level data and are passed over; XML
    files none of which is asset-level data are read as one, and the read names the error."""
    documents = sorted(folder.glob("*.xml"))
    filings = [path for path in documents if ex102.is_asset_data(path)] or documents
    tabular = [
        folder / f"{schema.kind}.{ext}"
        for schema in (schemas.LOAN_STATUS, schemas.PAYMENT_TRANSACTIONS)
        for ext in FORMATS
        if (folder / f"{schema.kind}.{ext}").exists()
    ]
    kinds = [path.name.split(".")[0] for path in tabular]
    if (filings and tabular) or len(kinds) != len(set(kinds)):
        # which one the servicer meant is not for the loader to guess
        raise AmbiguousDelivery(
            f"{folder}: the period is delivered twice, in different formats "
            f"({', '.join(p.name for p in [*filings, *tabular])}); deliver one"
        )
    if filings:
        return [
            (schemas.LOAN_STATUS, ex102.choose_file(filings, os.environ.get("CAOT_EX102_VARIANT")))
        ]
    return [
        (schemas.LOAN_STATUS, find_file(folder, "loan_status")),
        (schemas.PAYMENT_TRANSACTIONS, find_file(folder, "payment_transactions")),
    ]


def reference_file(inputs: Path, deal_id: str, schema: schemas.FileSchema) -> Path:
    """A file delivered once: the trust's own, or the shelf's (tangible net worth). The Receivable
    Schedule may be an SEC EX-102 filing instead (`receivable_schedule.xml`: a trust defined from
    its public filings, the pool at the start of that filing's period; docs/public_filings.md)."""
    folder = trust_dir(inputs, deal_id) if schema.per_trust else Path(inputs)
    filing = folder / f"{schema.kind}.xml"
    if schema is schemas.RECEIVABLE_SCHEDULE and filing.exists():
        return filing
    return find_file(folder, schema.kind)


@dataclass(frozen=True)
class DeliveredPeriods:
    periods: list[str]  # Collection Periods of the deal with a delivery folder, in order
    ignored: list[str]  # folders that are not a Collection Period of the deal, and why


def delivered_periods(folder: Path, deal: Deal) -> DeliveredPeriods:
    """The deal's Collection Periods delivered under `folder` (<...>/deliveries or the inbox's
    trust folder); any other folder is named in `ignored` with the reason."""
    valid = {p.collection_period for p in payment_periods(deal)}
    periods, ignored = [], []
    if not folder.is_dir():
        return DeliveredPeriods([], [])
    for child in sorted(folder.iterdir()):
        if not child.is_dir():
            continue
        if child.name in valid:
            periods.append(child.name)
        elif PERIOD_NAME.fullmatch(child.name):
            ignored.append(f"{child}: {child.name} is not a Collection Period of {deal.deal_id}")
        else:
            ignored.append(
                f"{child}: the folder name is not a Collection Period (YYYY-MM); not loaded"
            )
    return DeliveredPeriods(periods, ignored)
