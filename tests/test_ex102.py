"""SEC EX-102 asset-level XML as a delivery format: the traps of real files on small crafted files,
flat memory while streaming, and the real CarMax records (the XML route against the CSV route on
the same generated deal: test_public_filings.py)."""

import tracemalloc
from pathlib import Path

import duckdb
import pytest

from dagster_project.ingestion import ex102
from dagster_project.ingestion.schemas import LOAN_STATUS

NS = ex102.NAMESPACE


def filing(path: Path, records: list[str]) -> Path:
    body = "".join(f"<assets>{record}</assets>" for record in records)
    path.write_text(f'<?xml version="1.0"?><assetData xmlns="{NS}">{body}</assetData>')
    return path


PERIOD = (
    "<reportingPeriodBeginningDate>02-01-2016</reportingPeriodBeginningDate>"
    "<reportingPeriodEndingDate>02-29-2016</reportingPeriodEndingDate>"
)


def rows(path: Path) -> list[dict]:
    return [ex102.tape_row(record) for record in ex102.iter_assets(path)]


def test_an_omitted_element_is_null_never_zero(tmp_path):
    (row,) = rows(
        filing(
            tmp_path / "a.xml",
            [
                "<assetNumber>1</assetNumber>"
                + PERIOD
                + "<reportingPeriodBeginningLoanBalanceAmount>"
                "100.00</reportingPeriodBeginningLoanBalanceAmount><actualInterestCollectedAmount>0"
                "</actualInterestCollectedAmount>"
            ],
        )
    )
    assert row["actualInterestCollectedAmount"] == "0"  # reported zero stays zero
    assert row["actualPrincipalCollectedAmount"] is None  # omitted is NULL
    assert row["recoveredAmount"] is None and row["repurchaseAmount"] is None
    assert row["liquidationExpenseAmount"] is None


def test_repeated_elements_are_all_kept(tmp_path):
    (row,) = rows(
        filing(
            tmp_path / "a.xml",
            [
                "<assetNumber>1</assetNumber>" + PERIOD + "<zeroBalanceCode>99</zeroBalanceCode>"
                "<zeroBalanceCode>4</zeroBalanceCode><modificationTypeCode>3</modificationTypeCode>"
                "<modificationTypeCode>4</modificationTypeCode><subvented>1</subvented>"
                "<subvented>2</subvented><zeroBalanceEffectiveDate>02/2016</zeroBalanceEffectiveDate>"
            ],
        )
    )
    assert row["zeroBalanceCodes"] == "99|4" and row["zeroBalanceCode"] == "4"  # by precedence
    assert row["modificationTypeCodes"] == "3|4" and row["extensionGrantedIndicator"] == "true"
    assert row["subventedCodes"] == "1|2"


def test_dates_in_both_formats_and_rates_as_fractions(tmp_path):
    (record,) = ex102.iter_assets(
        filing(
            tmp_path / "a.xml",
            [
                "<assetNumber>1</assetNumber>" + PERIOD + "<interestPaidThroughDate>02-17-2016"
                "</interestPaidThroughDate><loanMaturityDate>07/2021</loanMaturityDate>"
                "<originalInterestRatePercentage>0.0596</originalInterestRatePercentage>"
            ],
        )
    )
    row = ex102.tape_row(record)
    assert row["reportingPeriodBeginningDate"] == "2016-02-01"
    assert row["interestPaidThroughDate"] == "2016-02-17"
    assert row["loanMaturityDate"] == "2021-07-01"  # MM/YYYY: the first of the month
    assert record["originalInterestRatePercentage"] == "0.0596"  # a fraction, not scaled
    # a date in neither format passes through, so the row checks name its row and field
    bad = ex102.tape_row({**record, "interestPaidThroughDate": "2016/02/17"})
    assert bad["interestPaidThroughDate"] == "2016/02/17"


def test_a_charge_off_counts_once_and_recoveries_keep_flowing(tmp_path):
    charged = (
        "<assetNumber>7</assetNumber><zeroBalanceCode>4</zeroBalanceCode>"
        "<zeroBalanceEffectiveDate>01/2016</zeroBalanceEffectiveDate>"
        "<chargedoffPrincipalAmount>1000.00</chargedoffPrincipalAmount>"
    )
    january = charged + (
        "<reportingPeriodBeginningDate>01-01-2016</reportingPeriodBeginningDate>"
        "<reportingPeriodEndingDate>01-31-2016</reportingPeriodEndingDate>"
    )
    february = charged + PERIOD + "<recoveredAmount>200.00</recoveredAmount>"
    february += "<repossessedProceedsAmount>150.00</repossessedProceedsAmount>"
    (first,) = rows(filing(tmp_path / "jan.xml", [january]))
    (later,) = rows(filing(tmp_path / "feb.xml", [february]))
    assert first["chargedoffPrincipalAmount"] == "1000.00" and first["loanStatus"] == "charged_off"
    assert later["chargedoffPrincipalAmount"] == "0.00"  # not a new loss
    assert later["recoveredAmount"] == "200.00"
    # repossessedProceedsAmount is retained history, often the same cash as recoveredAmount: kept
    # as filed, never an expense of the period (EX-102 reports none)
    assert later["liquidationExpenseAmount"] is None
    assert later["repossessedProceedsAmount"] == "150.00"


def test_a_charge_off_first_reported_after_its_effective_month_counts_in_that_file(tmp_path):
    """CarMax files some charge-offs a month or more after their effective month: the file that
    first shows the receivable leaving the pool (a balance at its start) carries the loss."""
    late = (
        "<assetNumber>8</assetNumber><zeroBalanceCode>4</zeroBalanceCode>"
        "<zeroBalanceEffectiveDate>12/2015</zeroBalanceEffectiveDate>"
        "<chargedoffPrincipalAmount>900.00</chargedoffPrincipalAmount>"
        "<reportingPeriodActualEndBalanceAmount>0.00</reportingPeriodActualEndBalanceAmount>"
    )
    (first,) = rows(
        filing(
            tmp_path / "feb.xml",
            [
                late + PERIOD + "<reportingPeriodBeginningLoanBalanceAmount>900.00"
                "</reportingPeriodBeginningLoanBalanceAmount>"
            ],
        )
    )
    (repeat,) = rows(
        filing(
            tmp_path / "mar.xml",
            [
                late + "<reportingPeriodBeginningDate>03-01-2016</reportingPeriodBeginningDate>"
                "<reportingPeriodEndingDate>03-31-2016</reportingPeriodEndingDate>"
                "<reportingPeriodBeginningLoanBalanceAmount>0.00"
                "</reportingPeriodBeginningLoanBalanceAmount>"
            ],
        )
    )
    assert first["chargedoffPrincipalAmount"] == "900.00" and first["loanStatus"] == "charged_off"
    assert repeat["chargedoffPrincipalAmount"] == "0.00"


def test_booleans_are_xs_boolean(tmp_path):
    repossessed, not_repossessed = rows(
        filing(
            tmp_path / "a.xml",
            [
                "<assetNumber>1</assetNumber>" + PERIOD + "<repossessedIndicator>1"
                "</repossessedIndicator>",
                "<assetNumber>2</assetNumber>" + PERIOD + "<repossessedIndicator>0"
                "</repossessedIndicator>",
            ],
        )
    )
    assert (repossessed["repossessedIndicator"], repossessed["loanStatus"]) == (
        "true",
        "repossessed",
    )
    assert (not_repossessed["repossessedIndicator"], not_repossessed["loanStatus"]) == (
        "false",
        "current",
    )


def test_malformed_numbers_and_months_pass_through_to_the_row_checks(tmp_path):
    """A value that is not a number or a month is written as filed (the tape's and the schedule's
    row checks then name its row and field), never an exception that stops the whole run."""
    xml = filing(
        tmp_path / "a.xml",
        ["<assetNumber>1</assetNumber>" + PERIOD + "<currentDelinquencyStatus>N/A"
         "</currentDelinquencyStatus><zeroBalanceEffectiveDate>ab/cdef</zeroBalanceEffectiveDate>"],
    )  # fmt: skip
    (row,) = rows(xml)
    assert (row["currentDelinquencyStatus"], row["loanStatus"]) == ("N/A", "current")
    out = tmp_path / "a.csv"
    ex102.convert(xml, out, LOAN_STATUS)
    (converted,) = duckdb.read_csv(str(out), all_varchar=True).fetchall()
    assert "N/A" in converted
    schedule = ex102.schedule_row(
        {
            "reportingPeriodBeginningLoanBalanceAmount": "100.00",
            "reportingPeriodBeginningDate": "02-01-2016",
            "originationDate": "abcd-ef-gh",
            "originalLoanAmount": "100.00",
        }
    )
    assert schedule["origination_date"] == "abcd-ef-gh"


def test_the_filings_other_exhibits_are_passed_over(tmp_path):
    """An ABS-EE filing carries EX-103 (XML too) beside the EX-102: a delivery folder holding both
    is the EX-102's; one holding only another document is read as one, and the read names it."""
    from dagster_project.ingestion.deliveries import tape_files

    tape = filing(tmp_path / "cart20262.xml", ["<assetNumber>1</assetNumber>"])
    exhibit = tmp_path / "exhibit103november2021.xml"
    exhibit.write_text(
        '<?xml version="1.0"?><assetRelatedDocument xmlns="http://www.sec.gov/edgar/document/'
        'absee/autoloan/assetrelateddocument"><comments>x</comments></assetRelatedDocument>'
    )
    assert ex102.is_asset_data(tape) and not ex102.is_asset_data(exhibit)
    assert tape_files(tmp_path) == [(LOAN_STATUS, tape)]
    tape.unlink()
    assert tape_files(tmp_path) == [(LOAN_STATUS, exhibit)]
    with pytest.raises(ex102.Ex102Error, match="not assetData"):
        list(ex102.iter_assets(exhibit))


def test_pool_variants_are_told_apart(tmp_path):
    large = filing(tmp_path / "cart20262_largepool.xml", ["<assetNumber>1</assetNumber>"])
    small = filing(tmp_path / "cart20262_smallpool.xml", ["<assetNumber>2</assetNumber>"])
    with pytest.raises(ex102.Ex102Error, match="several EX-102 files"):
        ex102.choose_file([large, small], None)
    assert ex102.choose_file([large, small], "largepool") == large
    assert ex102.choose_file([large, small], "smallpool") == small
    with pytest.raises(ex102.Ex102Error, match="matches 0"):
        ex102.choose_file([large, small], "mediumpool")


def test_a_delivery_of_two_pool_variants_and_none_named_is_rejected(tmp_path, monkeypatch):
    """Through the loader: the period is rejected with the reason, naming the folder."""
    from dagster_project.deal import load_deal
    from dagster_project.ingestion.loads import load_tapes

    deal = load_deal()
    folder = tmp_path / "deliveries" / "2016-02"
    folder.mkdir(parents=True)
    filing(folder / "cart_largepool.xml", ["<assetNumber>1</assetNumber>"])
    filing(folder / "cart_smallpool.xml", ["<assetNumber>2</assetNumber>"])
    monkeypatch.delenv("CAOT_EX102_VARIANT", raising=False)
    with duckdb.connect() as con:
        report = load_tapes(
            con, {deal.deal_id: tmp_path / "deliveries"}, {deal.deal_id: deal},
            [(deal.deal_id, "2016-02")],
        )  # fmt: skip
        recorded = con.execute(
            "select scope, status, first_finding from raw.deliveries"
        ).fetchall()  # the gate and the index read it
    (error,) = report.rejected
    (finding,) = error.findings
    assert finding.file == str(folder)
    assert "several EX-102 files" in finding.reason and "CAOT_EX102_VARIANT" in finding.reason
    assert recorded == [("2016-02", "rejected", str(finding))]


def test_not_asset_data_or_not_xml_is_a_clear_error(tmp_path):
    other = tmp_path / "other.xml"
    other.write_text("<report/>")
    with pytest.raises(ex102.Ex102Error, match="not assetData"):
        list(ex102.iter_assets(other))
    mortgages = filing(tmp_path / "rmbs.xml", ["<assetNumber>1</assetNumber>"])
    mortgages.write_text(mortgages.read_text().replace("/autoloan/", "/rmbs/"))
    with pytest.raises(ex102.Ex102Error, match="namespace .*rmbs.*, not auto loans"):
        list(ex102.iter_assets(mortgages))
    unqualified = filing(tmp_path / "plain.xml", ["<assetNumber>1</assetNumber>"])
    unqualified.write_text(unqualified.read_text().replace(f' xmlns="{NS}"', ""))
    assert [r["assetNumber"] for r in ex102.iter_assets(unqualified)] == ["1"]
    broken = tmp_path / "broken.xml"
    broken.write_text(f'<assetData xmlns="{NS}"><assets><assetNumber>1</assets>')
    with pytest.raises(ex102.Ex102Error, match="not well-formed"):
        list(ex102.iter_assets(broken))


def _big_filing(path: Path, records: int) -> Path:
    record = (
        "<assets><assetNumber>{}</assetNumber>" + PERIOD + "<reportingPeriodBeginningLoanBalance"
        "Amount>12345.67</reportingPeriodBeginningLoanBalanceAmount><zeroBalanceCode>1"
        "</zeroBalanceCode><modificationTypeCode>4</modificationTypeCode>"
        + "<x>padding</x>" * 20
        + "</assets>"
    )
    with path.open("w") as out:
        out.write(f'<assetData xmlns="{NS}">')
        for number in range(records):
            out.write(record.format(number))
        out.write("</assetData>")
    return path


def test_streaming_keeps_memory_flat(tmp_path):
    """Ten times the records, about the same peak: nothing accumulates while parsing."""
    peaks = []
    for records in (1_000, 10_000):
        path = _big_filing(tmp_path / f"{records}.xml", records)
        tracemalloc.start()
        count = ex102.convert(path, tmp_path / "out.csv", LOAN_STATUS)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert count == records
    assert peaks[1] < 2 * peaks[0] + 1_000_000, peaks
    assert peaks[1] < 20_000_000


REAL_FILING = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "reference"
    / "ex102"
    / "carmax-2026-2_2026-06.xml"
)


@pytest.mark.skipif(not REAL_FILING.exists(), reason="the shared reference filing is not here")
def test_a_real_carmax_filing_reads_as_its_readme_says():
    """CarMax Auto Owner Trust 2026-2, June 2026 (300 records, verbatim): balances, opaque asset
    numbers, omitted delinquency status, paid-off receivables kept with zero balances."""
    from decimal import Decimal

    rows = [ex102.tape_row(record) for record in ex102.iter_assets(REAL_FILING)]
    assert len(rows) == 300
    begin = sum(Decimal(r["reportingPeriodBeginningLoanBalanceAmount"]) for r in rows)
    end = sum(Decimal(r["reportingPeriodActualEndBalanceAmount"]) for r in rows)
    assert (begin, end) == (Decimal("6087476.17"), Decimal("5894776.38"))
    assert any(set(r["assetNumber"]) & set("+/=") for r in rows)  # base64 tokens, kept whole
    assert len({r["assetNumber"] for r in rows}) == 300
    paid = [r for r in rows if r["zeroBalanceCode"] == "1"]
    assert len(paid) == 16 and {r["loanStatus"] for r in paid} == {"paid_in_full"}
    # a payoff of an earlier month stays with zero balances and no cash: not paid off again
    earlier = [r for r in paid if r["zeroBalanceEffectiveDate"] < "2026-06-01"]
    kept = [r for r in earlier if Decimal(r["reportingPeriodBeginningLoanBalanceAmount"]) == 0]
    assert kept and all(Decimal(r["actualPrincipalCollectedAmount"]) == 0 for r in kept)
    # a payoff effective in May whose cash this June filing carries: its principal is here
    late_cash = [r for r in earlier if Decimal(r["reportingPeriodBeginningLoanBalanceAmount"]) > 0]
    assert all(
        r["actualPrincipalCollectedAmount"] == r["reportingPeriodBeginningLoanBalanceAmount"]
        and Decimal(r["reportingPeriodActualEndBalanceAmount"]) == 0
        for r in late_cash
    )
    assert any(r["currentDelinquencyStatus"] is None for r in paid)  # omitted, not 0
