"""Reconciliation mode on the real published certificates of shared/reference, and its errors."""

import csv
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from dagster_project.reconcile import printed_difference

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


SHELF_SET = ROOT / "data" / "reconciliation"
# trusts whose stored first page the recomputation reproduces line for line (data/reconciliation/
# README.md says why the others differ: their pages stop before the collections or the coupon)
REPRODUCED = {
    "caot-2007-3": "old form, A-3a/A-3b and A-2a/A-2b pro rata, LIBOR floaters, no Class D",
    "caot-2010-2": "six classes; OC share of the current pool, its 0.40% floor binding",
    "caot-2011-1": "OC share of the current pool, its 0.25% floor binding",
    "caot-2011-2": "OC 1.0% of the current pool",
    "caot-2011-3": "OC 1.0% of the current pool",
    "caot-2013-2": "OC 0.50% of the initial pool",
    "caot-2022-1": "no floating class",
    "caot-2024-2": "SOFR floater; lines 10-11 printed in whole dollars",
}


def test_the_shelf_s_published_certificates_in_one_build(tmp_path):
    """Every published certificate at hand, all trusts in one dbt build: the two of
    shared/reference (2014-4 and 2012-3, whose deal files are in the shelf) and the fifteen of
    data/reconciliation."""
    pairs = []
    references = {c["series"]: c for c in json.loads(REFERENCE.read_text())}
    for series, deal_file in sorted(DEAL_FILES.items()):
        published = references[series]
        reported = write_reported(
            tmp_path / f"reference_{series}.csv",
            [(published["distribution_date"], line, v) for line, v in published["lines"].items()],
        )
        pairs += ["--deal", str(ROOT / "data" / "deals" / deal_file), "--reported", str(reported)]
    for reported in sorted((SHELF_SET / "certificates").glob("*.csv")):
        name = reported.stem.rsplit("_", 1)[0]
        pairs += ["--deal", str(SHELF_SET / "deals" / f"{name}.yaml"), "--reported", str(reported)]
    result = subprocess.run(
        [sys.executable, "-m", "dagster_project.reconcile", *pairs, "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    results = {}
    for folder in sorted(p for p in tmp_path.iterdir() if p.is_dir() and p.name != "out"):
        with (folder / "reconciliation.csv").open() as handle:
            results[folder.name] = list(csv.DictReader(handle))
    assert len(results) == len(pairs) // 4 >= 16
    for series in DEAL_FILES:  # the two certificates of shared/reference, every line
        deal_id = f"caot-{series}"
        rows = results[deal_id]
        assert {r["line"] for r in rows} == set(references[series]["lines"])
        compared = [r for r in rows if r["line"][0] in "89" or r["line"] in ("10", "11")]
        assert len(compared) >= 34  # lines 8 and 9 of every class and the total, 10, 11
        assert [r for r in rows if Decimal(r["difference"]) != 0] == [], deal_id
        with (tmp_path / deal_id / "certificate.csv").open() as handle:
            certificate = list(csv.DictReader(handle))
        assert len(certificate) > 150
        empty = {r["line"] for r in certificate if r["value"] == ""}
        # only figures a certificate reports and no rule computes: weighted averages, losses,
        # delinquency, net worth (the stored copies stop at line 12 or 14)
        assert len(empty) <= 20, empty
    for deal_id in REPRODUCED:
        rows = results[deal_id]
        assert len(rows) >= 39, deal_id
        assert [r for r in rows if Decimal(r["difference"]) != 0] == [], deal_id
    # the pool's roll-forward reproduces everywhere, and the overcollateralization target (line 10,
    # old form 9) wherever its rule is known (2025-2 prints a figure its own rule does not give)
    for deal_id, rows in results.items():
        lines = {r["line"]: r for r in rows}
        old_form = "7a_end" in lines
        checked = ["1", "2", "3", "4", "5"] + ([] if deal_id == "caot-2025-2" else
                                               ["9" if old_form else "10"])  # fmt: skip
        for line in checked:
            if line in lines:
                assert Decimal(lines[line]["difference"]) == 0, (deal_id, lines[line])
    whole_dollars = {r["line"]: r for r in results["caot-2024-2"]}["10"]
    assert (whole_dollars["reported"], whole_dollars["recomputed"]) == ("12090686", "12090685.50")


def test_a_figure_is_compared_at_the_precision_it_was_printed():
    assert printed_difference("12090685.50", "12090686") == Decimal("0.00")
    assert printed_difference("12090685.49", "12090686") == Decimal("-1.00")
    assert printed_difference("5337043.19", "5337043.18") == Decimal("0.01")
    assert printed_difference("0.9302324", "0.9302324") == Decimal("0E-7")


def test_a_trust_given_twice_or_a_csv_missing_is_an_error(tmp_path):
    deal = ROOT / "data" / "deals" / "caot_2014_4.yaml"
    reported = write_reported(tmp_path / "r.csv", [("2016-01-15", "1", "1.00")])
    twice = subprocess.run(
        [sys.executable, "-m", "dagster_project.reconcile", "--deal", str(deal), "--reported",
         str(reported), "--deal", str(deal), "--reported", str(reported), "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert twice.returncode == 2 and "a trust is given twice: ['caot-2014-4']" in twice.stderr
    unpaired = subprocess.run(
        [sys.executable, "-m", "dagster_project.reconcile", "--deal", str(deal), "--deal",
         str(deal), "--reported", str(reported), "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert unpaired.returncode == 2 and "one --reported CSV for each --deal" in unpaired.stderr


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
