"""Reconciliation mode on the real published certificates of shared/reference, and its errors."""

import csv
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# first pages of real published certificates (SEC Form 10-D, Ex. 99.1), copied from shared/reference
REFERENCE = ROOT / "tests" / "fixtures" / "carmax_published_certificates.json"
DEAL_FILES = {"2014-4": "caot_2014_4.yaml", "2012-3": "caot_2012_3.yaml"}


def run_reconcile(deal: Path, reported: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "dagster_project.reconcile",
            "--deal",
            str(deal),
            "--reported",
            str(reported),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def write_reported(path: Path, rows) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["distribution_date", "line", "value"])
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("series", sorted(DEAL_FILES))
def test_published_certificate_is_reproduced_to_the_cent(series, tmp_path):
    published = next(c for c in json.loads(REFERENCE.read_text()) if c["series"] == series)
    reported = write_reported(
        tmp_path / "reported.csv",
        [
            (published["distribution_date"], line, value)
            for line, value in published["lines"].items()
        ],
    )
    result = run_reconcile(ROOT / "data" / "deals" / DEAL_FILES[series], reported, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    with (tmp_path / "out" / "reconciliation.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["line"] for r in rows} == set(published["lines"])
    compared = [r for r in rows if r["line"][0] in "89" or r["line"] in ("10", "11")]
    assert len(compared) >= 34  # lines 8 and 9 of every class and the total, 10, 11
    for row in rows:
        assert Decimal(row["difference"]) == 0, row
    with (tmp_path / "out" / "certificate.csv").open() as handle:
        certificate = list(csv.DictReader(handle))
    assert len(certificate) > 150
    empty = {r["line"] for r in certificate if r["value"] == ""}
    # only figures a certificate reports and no rule computes: weighted averages, losses,
    # delinquency, net worth (the stored copies stop at line 12 or 14)
    assert len(empty) <= 20, empty


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("2016-01-15", "1", "abc")], "row 2, field value: not a number"),
        ([("15/01/2016", "1", "1.00")], "row 2, field distribution_date"),
        ([("2016-01-15", "99z", "1.00")], "row 2, field line: '99z' is not a line"),
        ([("2016-01-14", "1", "1.00")], "is not a Distribution Date"),
        ([("2016-01-15", "1", "1.00"), ("2016-01-15", "1", "2.00")], "line 1 repeated"),
        ([("2016-01-15", "1", "1.00")], "line 2 (principal_collections_amount) is required"),
    ],
)
def test_malformed_reported_csv_exits_non_zero_naming_row_and_field(rows, message, tmp_path):
    reported = write_reported(tmp_path / "bad.csv", rows)
    result = run_reconcile(ROOT / "data" / "deals" / "caot_2014_4.yaml", reported, tmp_path / "out")
    assert result.returncode == 2
    assert message in result.stderr
    assert (
        str(reported) in result.stderr
        or "Distribution Date" in result.stderr
        or "required" in result.stderr
    )


def test_malformed_deal_file_exits_non_zero(tmp_path):
    deal = tmp_path / "deal.yaml"
    deal.write_text("trust_name: X\n")
    reported = write_reported(tmp_path / "r.csv", [("2016-01-15", "1", "1.00")])
    result = run_reconcile(deal, reported, tmp_path / "out")
    assert result.returncode == 2
    assert "missing required field" in result.stderr


def test_wrong_header_exits_non_zero(tmp_path):
    reported = tmp_path / "r.csv"
    reported.write_text("date,line,amount\n2016-01-15,1,1.00\n")
    result = run_reconcile(ROOT / "data" / "deals" / "caot_2014_4.yaml", reported, tmp_path / "out")
    assert result.returncode == 2
    assert "header must be distribution_date,line,value" in result.stderr
