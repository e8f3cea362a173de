"""The rendered documents: a certificate and a statement (HTML and PDF) for every Distribution Date,
the performance report's plots; the PDF pages are rendered to images and read back."""

import shutil
from decimal import Decimal

import duckdb
import pypdfium2 as pdfium
import pytest
from conftest import DEAL_ID

from dagster_project.reports.document import display


@pytest.fixture(scope="module")
def dates_and_pools(built_warehouse):
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    rows = con.execute(
        "select distribution_date, value from marts.rpt_servicer_certificate "
        "where deal_id = ? and line = '5' order by 1",
        [DEAL_ID],
    ).fetchall()
    con.close()
    return rows


@pytest.fixture(scope="module")
def reports(built_warehouse):
    return built_warehouse["reports"] / DEAL_ID


def _pdf_text_and_ink(path) -> tuple[str, list[float]]:
    """All pages' text, and per page the share of pixels that are not white (it was drawn)."""
    pdf = pdfium.PdfDocument(str(path))
    text, ink = [], []
    for index in range(len(pdf)):
        page = pdf[index]
        text.append(page.get_textpage().get_text_range())
        image = page.render(scale=0.5).to_pil().convert("L")
        pixels = list(image.getdata())
        ink.append(sum(1 for p in pixels if p < 200) / len(pixels))
    pdf.close()
    return "\n".join(text), ink


def test_every_distribution_date_has_a_certificate_and_a_statement(reports, dates_and_pools):
    for date, _pool in dates_and_pools:
        certificate = (reports / "certificates" / f"certificate_{date}.html").read_text()
        assert "MONTHLY SERVICER&#x27;S CERTIFICATE" in certificate
        assert f"{date:%m/%d/%Y}" in certificate
        for line in ("1.", "8.", "29.", "45.", "78.", "80."):
            assert f'<td class="no">{line}</td>' in certificate, (date, line)
        statement = (reports / "statements" / f"statement_{date}.html").read_text()
        assert "(xxii)" in statement and "(i)" in statement
        for stem in (f"certificates/certificate_{date}", f"statements/statement_{date}"):
            assert (reports / f"{stem}.pdf").stat().st_size > 1000, stem
    index = (reports / "index.html").read_text()
    assert index.count("certificate (<a") == len(dates_and_pools)
    shelf = (reports.parent / "index.html").read_text()
    assert f'href="{DEAL_ID}/index.html"' in shelf


def test_certificate_pdf_pages_render_and_show_the_key_figures(reports, dates_and_pools):
    for date, pool in (dates_and_pools[0], dates_and_pools[-1]):
        text, ink = _pdf_text_and_ink(reports / "certificates" / f"certificate_{date}.pdf")
        assert len(ink) >= 3  # Exhibit A runs to several pages
        assert all(share > 0.005 for share in ink), ink  # every page has something drawn on it
        assert "MONTHLY SERVICER'S CERTIFICATE" in text
        assert f"{date:%m/%d/%Y}" in text
        assert display(pool, "money") in text  # line 5
        for label in ("Available Funds", "Reserve Account Deficiency", "Delinquency Analysis"):
            assert label in text, label
    first, _ = _pdf_text_and_ink(
        reports / "certificates" / f"certificate_{dates_and_pools[0][0]}.pdf"
    )
    for amount in ("39,678.33", "99,341.39", "78,602.15", "240,890.00", "37,187.50"):
        assert f"${amount}" in first  # Art. I first-period Monthly Interest
    text, ink = _pdf_text_and_ink(reports / "statements" / f"statement_{dates_and_pools[0][0]}.pdf")
    assert "STATEMENT TO NOTEHOLDERS" in text and "(xxii)" in text and ink[0] > 0.005


def test_the_html_certificate_prints_exact_amounts(reports, dates_and_pools):
    date, pool = dates_and_pools[0]
    page = (reports / "certificates" / f"certificate_{date}.html").read_text()
    assert f"${Decimal(pool):,.2f}" in page
    assert "$39,678.33" in page and "$78,602.15" in page


def test_performance_report_has_every_plot(reports, dates_and_pools):
    performance = (reports / "performance.html").read_text()
    assert performance.count("<svg ") == 7 + 1  # and the vintage curves
    for title in ("Pool Balance and Note Balances", "Delinquency", "Cumulative net loss", "CPR"):
        assert title in performance
    # a data table under each plot but the factors, with the exact figures
    assert performance.count("<details><summary>data</summary>") == 6
    date, pool = dates_and_pools[-1]
    assert f"<td>{date:%Y-%m-%d}</td><td>{display(pool, 'money')}</td>" in performance
    assert "plotted while the Pool Balance is at least 5% of the Initial Pool Balance" in (
        " ".join(performance.split())
    )
    # the investor views (reports/analytics.py): the transition matrix rows sum to 100
    for heading in (
        "Roll rates, Collection Period",
        "Cumulative net loss by origination quarter",
        "Recoveries by Collection Period of default",
        "Pool by credit score",
    ):
        assert heading in performance  # fmt: skip
    matrix = performance.split("Roll rates, Collection Period", 1)[1].split("</table>", 1)[0]
    first_row = matrix.split("</th></tr><tr><td>", 1)[1].split("</tr>", 1)[0]
    cells = first_row.split("</td>", 1)[1].replace("<td class=num>", "").split("</td>")
    shares = [Decimal(c) for c in cells if c]
    assert abs(sum(shares) - 100) <= Decimal("0.05")


def test_a_document_that_did_not_change_keeps_its_published_pdf(
    built_warehouse, tmp_path, monkeypatch
):
    from dagster_project.reports import writer

    published = built_warehouse["reports"]
    rendered = []
    real = writer.render_pdf
    monkeypatch.setattr(
        writer, "render_pdf", lambda doc, path: (rendered.append(path), real(doc, path))
    )
    stem = f"{DEAL_ID}/certificates/certificate_2015-11-16"
    changed = tmp_path / "published"
    shutil.copytree(published, changed)
    # the certificate as an earlier publication rendered it: another digest (writer.DIGESTS)
    digests = changed / DEAL_ID / writer.DIGESTS
    lines = digests.read_text(encoding="utf-8").splitlines()
    stem_in_trust = stem.removeprefix(f"{DEAL_ID}/")
    assert any(line.endswith(f"  {stem_in_trust}") for line in lines)
    digests.write_text(
        "".join(
            f"{'0' * 64}  {stem_in_trust}\n" if line.endswith(f"  {stem_in_trust}") else f"{line}\n"
            for line in lines
        ),
        encoding="utf-8",
    )
    # an earlier publication's package: its zip is kept (the same file), its folder is not
    packages = changed / DEAL_ID / "auditor" / "packages"
    (latest,) = [p for p in packages.iterdir() if p.is_dir()]
    shutil.copytree(latest, packages / "1999-01")
    shutil.copyfile(latest.with_suffix(".zip"), packages / "1999-01.zip")
    counts = writer.write_reports(built_warehouse["published"], tmp_path / "out", published=changed)
    assert counts["certificates"] > 1
    assert rendered == [tmp_path / "out" / f"{stem}.pdf"]  # only the page that differs
    written = tmp_path / "out" / DEAL_ID / "auditor" / "packages"
    assert sorted(p.name for p in written.iterdir()) == sorted(
        [latest.name, f"{latest.name}.zip", "1999-01.zip"]
    )
    assert (written / "1999-01.zip").stat().st_ino == (packages / "1999-01.zip").stat().st_ino
    # the unchanged documents' pages are the published files themselves, HTML and PDF
    for suffix in (".html", ".pdf"):
        kept = f"{DEAL_ID}/certificates/certificate_2015-12-15{suffix}"
        assert (tmp_path / "out" / kept).stat().st_ino == (changed / kept).stat().st_ino
    for pdf in (tmp_path / "out").rglob("*.pdf"):
        # the auditor report and the auditor's package are written on each run
        if pdf in rendered or "auditor" in pdf.relative_to(tmp_path / "out").parts:
            continue
        assert pdf.read_bytes() == (published / pdf.relative_to(tmp_path / "out")).read_bytes()


def test_a_change_to_the_renderers_renders_every_document_again(
    built_warehouse, tmp_path, monkeypatch
):
    from dagster_project.reports import writer

    rendered = []
    monkeypatch.setattr(writer, "render_pdf", lambda doc, path: rendered.append(path))
    monkeypatch.setattr(writer, "RENDERERS", "another layout")
    writer.write_reports(
        built_warehouse["published"], tmp_path / "out", published=built_warehouse["reports"]
    )
    certificates = sorted((built_warehouse["reports"] / DEAL_ID / "certificates").glob("*.pdf"))
    assert certificates
    assert {p.name for p in certificates} <= {p.name for p in rendered}


def test_a_certificate_carries_its_notes_and_only_its_own(built_warehouse, reports):
    """The 4.1(d) release (Section 2.8 of the Indenture not available: the literal reading) is
    noted on the dates it happens, under the lines, in the HTML and the PDF; so is line 21 net of
    the 4.2 reimbursements; other dates have no such note."""
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    released = {
        d
        for (d,) in con.execute(
            "select distribution_date from marts.fct_distribution_date "
            "where deal_id = ? and is_reserve_released_in_full",
            [DEAL_ID],
        ).fetchall()
    }
    noted = dict(
        con.execute(
            "select distribution_date, note from marts.rpt_certificate_notes "
            "where deal_id = ? and section = '4.1(d)'",
            [DEAL_ID],
        ).fetchall()
    )
    dates = [d for (d,) in con.execute(
        "select distribution_date from marts.fct_distribution_date where deal_id = ?", [DEAL_ID]
    ).fetchall()]  # fmt: skip
    con.close()
    assert released, "the small deal's last dates release the Reserve Account (4.1(d))"
    assert set(noted) == released
    for date in dates:
        page = (reports / "certificates" / f"certificate_{date}.html").read_text()
        assert ("Section 4.1(d) applies" in page) == (date in released), date
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    reimbursed = {
        d
        for (d,) in con.execute(
            "select distribution_date from marts.fct_pool_period "
            "where deal_id = ? and simple_interest_advance_reimbursements_amount > 0",
            [DEAL_ID],
        ).fetchall()
    }
    con.close()
    assert reimbursed, "the small deal's advances are reimbursed from later receipts (4.2)"
    for date in dates:
        page = (reports / "certificates" / f"certificate_{date}.html").read_text()
        assert ("Line 21 is the Simple Interest Advances deposited" in page) == (
            date in reimbursed
        ), date
    date = min(released)
    assert "Section 2.8 of the Indenture" in noted[date]
    text, _ink = _pdf_text_and_ink(reports / "certificates" / f"certificate_{date}.pdf")
    assert "Notes" in text and "Section 4.1(d) applies" in " ".join(text.split())


def _pages(path) -> list[str]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def test_the_certificate_reads_as_exhibit_a(reports, dates_and_pools):
    """Group headings, the signature block, and a footer on every page naming the deal, the
    Distribution Date and "page x of y"; in the HTML and in the PDF."""
    date = dates_and_pools[len(dates_and_pools) // 2][0]
    pages = _pages(reports / "certificates" / f"certificate_{date}.pdf")
    text = "\n".join(pages)
    for heading in (
        "Finance Charges:",
        "Principal:",
        "Class A Noteholder Interest Amounts",
        "Lesser of: (a or b)",
        "Deposits",
        "Withdrawals",
    ):
        assert heading in text, heading
    assert "IN WITNESS WHEREOF, the undersigned has duly executed this certificate on" in pages[-1]
    assert "CARMAX BUSINESS SERVICES, LLC" in pages[-1] and "As Servicer" in pages[-1]
    for number, page in enumerate(pages, 1):
        assert f"page {number} of {len(pages)}" in page
        assert "CarMax Auto Owner Trust 2015-4 \u00b7 Monthly Servicer's Certificate" in page
        assert f"Distribution Date {date:%m/%d/%Y}" in page.splitlines()[-2:][0] + page
    html = (reports / "certificates" / f"certificate_{date}.html").read_text()
    assert '<tr class="group"><td class="no">17.</td><td colspan="3">Finance Charges:</td>' in html
    assert "IN WITNESS WHEREOF" in html and "As Servicer" in html


def test_a_heading_never_ends_a_page_and_a_split_section_says_continued(tmp_path):
    """Sections long enough to split: every page after the first starts with a heading that
    says "(continued)" (the line's heading too when the split falls inside its group), and no
    page's last row is a heading."""
    from dagster_project.reports.document import Document, Row
    from dagster_project.reports.pdf_render import render_pdf

    rows = []
    for section in range(3):
        rows.append(Row("section", label=f"Section {section}"))
        for number in range(12):
            rows.append(Row("group", f"{section * 100 + number}.", f"Group {section}-{number}"))
            rows += [Row("line", "", f"{letter}. item", ("$1.00",), True) for letter in "abcde"]
    document = Document("TITLE", ("sub",), (("Distribution Date", "01/18/2022"),), tuple(rows))
    pages = _pages(render_pdf(document, tmp_path / "long.pdf"))
    assert len(pages) >= 4
    bodies = [
        [line for line in p.strip().splitlines() if not line.startswith("page ")] for p in pages
    ]
    for body in bodies[1:]:
        assert body[0].startswith("Section") and body[0].endswith(" (continued)"), body[0]
        assert "(continued) (continued)" not in body[0]
    for body in bodies:
        assert "Section" not in body[-1] and "Group" not in body[-1], body[-1]
    inside = [body for body in bodies[1:] if "Group" in body[1] and "(continued)" in body[1]]
    assert inside, "a split inside a group repeats the group's heading"


def test_a_section_splits_after_the_most_rows_its_table_fits():
    """A split keeps under the heading as many rows as the table of the heading and those rows
    fits in the height (counted here on whole tables, one count after another), with rows of
    one and of several lines (labels that wrap)."""
    from dagster_project.reports.document import Row
    from dagster_project.reports.pdf_render import FRAME_WIDTH, Section, _table

    words = ["the", "servicer", "shall", "deposit", "into", "the", "collection", "account"]
    rows = []
    for number in range(40):
        label = " ".join(words[: 1 + (number * 7) % len(words)] * (1 + number % 4))
        rows.append((Row("line", f"{number}.", label, ("$1.00",), True), None))
    widths = (50.0, FRAME_WIDTH - 50 - 2 * 97.2, 97.2, 97.2)
    for height in (40, 95, 180, 333, 560):
        section = Section(Row("section", label="Heading"), rows, widths)

        def table_height(count: int, height: float) -> float:
            lines = Section(Row("section", label="Heading"), rows[:count], widths)._lines()
            return _table(lines, widths).wrap(FRAME_WIDTH, height)[1]

        most = max(c for c in range(len(rows) + 1) if c == 0 or table_height(c, height) <= height)
        parts = section.split(FRAME_WIDTH, height)
        if most < 2:
            assert parts == [], height
        else:
            assert len(parts[0].rows) == most, height
            assert parts[1].rows == rows[most:]


def test_the_statement_prints_tables_and_flags(reports, dates_and_pools):
    date = dates_and_pools[len(dates_and_pools) // 2][0]
    text = " ".join("\n".join(_pages(reports / "statements" / f"statement_{date}.pdf")).split())
    assert "Delinquent Receivables" in text and "Number" in text
    assert text.count("31-60 days delinquent") == 1  # one table row, count and balance beside
    assert "Outstanding principal balance and Note Pool Factor after the distribution" in text
    assert text.count("Class A-1") == 3  # items (i), (vii) and (ix): one row each
    html = (reports / "statements" / f"statement_{date}.html").read_text()
    flag = html.split("Clean-up call")[1].split("</tr>")[0]
    assert ">No<" in flag or ">Yes<" in flag
    assert "$" not in flag
    assert "page 1 of " in text and "Statement to Noteholders" in text


def test_every_report_says_where_its_figures_come_from(built_warehouse, reports, dates_and_pools):
    """Provenance: the code version, the deal file's SHA-256, the SHA-256 of the delivered files
    (the period's own tapes by name), on the certificate, the statement, the performance and the
    auditor reports; a certificate's provenance is its version's, so it is stable run to run."""
    from dagster_project.reports.provenance import code_version

    published = built_warehouse["published"]
    con = duckdb.connect(str(published), read_only=True)
    date = dates_and_pools[3][0]
    period, deal_sha = con.execute(
        "select calendar.collection_period, deals.deal_file_sha256 "
        "from staging.stg_deal__payment_calendar as calendar "
        "inner join raw.deals as deals using (deal_id) "
        "where calendar.deal_id = ? and calendar.distribution_date = ?",
        [DEAL_ID, date],
    ).fetchone()
    tapes = dict(
        con.execute(
            "select file_kind, sha256 from raw.deliveries where deal_id = ? and scope = ? "
            "and status = 'loaded'",
            [DEAL_ID, period],
        ).fetchall()
    )
    (schedule,) = con.execute(
        "select sha256 from raw.deliveries where deal_id = ? and file_kind = "
        "'receivable_schedule' and status = 'loaded'",
        [DEAL_ID],
    ).fetchone()
    con.close()
    pdf_text = "\n".join(_pages(reports / "certificates" / f"certificate_{date}.pdf"))
    for page in (
        (reports / "certificates" / f"certificate_{date}.html").read_text(),
        (reports / "statements" / f"statement_{date}.html").read_text(),
        pdf_text.replace("\r", "").replace("\n", " "),
    ):
        assert "Provenance" in page and "Computed version 1," in page
        assert f"Code version {code_version()}" in page and deal_sha in page
        assert schedule in page
        for kind in ("loan_status", "payment_transactions"):
            assert f"{period} {kind}: SHA-256 {tapes[kind]}" in page
        assert "The 3 earlier Collection Periods" in page and "6 tape files" in page
    for page in (
        (reports / "performance.html").read_text(),
        (reports / "auditor" / "index.html").read_text(),
    ):
        assert "Provenance" in page and deal_sha in page and "tape files" in page
    auditor = "\n".join(_pages(reports / "auditor" / "auditor_report.pdf"))
    last = dates_and_pools[-1][0]
    assert f"Distribution Date {last:%m/%d/%Y}" in auditor and "Collection Period" in auditor
    assert "page 1 of" in auditor and "Provenance" in auditor


def test_the_pool_by_credit_score_now_is_its_last_period_with_receivables_outstanding():
    """A pool paid down to nothing has a last Collection Period with no receivable outstanding
    (and no stratification rows): the section shows the period before it beside the cutoff."""
    from dagster_project.reports.analytics import _stratification

    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute(
        "create table marts.fct_pool_period as select * from (values ('d', 1, 5), ('d', 2, 3), "
        "('d', 3, 0), ('e', 4, 9)) as t(deal_id, period_number, receivables_outstanding)"
    )
    con.execute(  # the last receivable-periods: the receivables paid off in period 3
        "create table marts.fct_receivable_period as select * from (values ('d', 'r1', 3), "
        "('d', 'r2', 3)) as t(deal_id, receivable_id, period_number)"
    )
    con.execute(
        "create table marts.rpt_stratification as select * from (values "
        "('d', 0, 'cutoff', 'credit score', '700-749', 5, 500.00, 100.00, 5.00), "
        "('d', 1, '2016-01', 'credit score', '700-749', 5, 400.00, 100.00, 5.00), "
        "('d', 2, '2016-02', 'credit score', '700-749', 3, 200.00, 100.00, 5.00), "
        "('e', 4, '2016-04', 'credit score', '700-749', 9, 900.00, 100.00, 5.00)) "
        "as t(deal_id, period_number, collection_period, dimension, bucket, receivable_count, "
        "principal_balance, balance_share_percent, weighted_average_apr_percent)"
    )
    section = _stratification(con, "d")
    assert "<td>cutoff</td>" in section and "<td>2016-02</td>" in section
    assert "<td>2016-01</td>" not in section and "<td>2016-04</td>" not in section
    assert "$200.00" in section
