"""The auditor report: every Section 2.3 representation and every Exhibit D criterion, tested or not
testable, with the suite and expectations that test it, what was tested and what failed, the
breach register with its repurchases, and the periods whose certificates are withheld.

Built from expectations/representations.yml and the quality schema of the published warehouse.
"""

import csv
import html
import os
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import yaml

from dagster_project.deal import PROJECT_ROOT
from dagster_project.reports.charts import bar_chart
from dagster_project.reports.document import Document, Row
from dagster_project.reports.pdf_render import render_pdf

CATALOG = PROJECT_ROOT / "expectations" / "representations.yml"

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; max-width: 72em; margin: 2em auto; color: #111; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
code { overflow-wrap: anywhere; }
.provenance { font-size: 0.8em; color: #555; word-break: break-all; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.fail { color: #a40000; font-weight: bold; } .pass { color: #176317; } .na { color: #666; }
"""


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    tested_by: str | None
    reason: str | None
    note: str | None
    applicable: bool


@cache
def load_catalog(path: Path = CATALOG) -> dict[str, tuple[Entry, ...]]:
    """The catalog's entries by part, read once per process (every trust's report and package
    reads the same file)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {
        part: tuple(
            Entry(
                id=item["id"],
                title=item["title"],
                tested_by=item.get("tested_by"),
                reason=item.get("reason"),
                note=item.get("note"),
                applicable=bool(item.get("applicable", False)),
            )
            for item in raw[part]
        )
        for part in ("representations", "servicing_criteria")
    }


def results_for(entry: Entry, results: list[tuple]) -> list[tuple]:
    """Expectations whose meta names this entry (as its representation or among `also`); a
    trust's suites are named `<deal_id>.<suite>`."""
    return [
        r
        for r in results
        if entry.tested_by
        and r[0].split(".")[-1] == entry.tested_by
        and (r[2] == entry.id or entry.id in (r[3] or "").split(", "))
    ]


def public_data_gap(entry: Entry, rows: list[tuple], not_public: dict[str, list[str]]) -> str:
    """Why the public filings cannot test `entry` (a trust whose schedule was built from an EX-102
    filing; '' when they can): every rule of it left out of the suite, or the ones left out."""
    reasons = not_public.get(entry.id)
    if not reasons:
        return ""
    prefix = "not testable from public data" if not rows else "partly testable from public data"
    return f"{prefix}: {'; '.join(dict.fromkeys(reasons))}"


def _status_cell(entry: Entry, rows: list[tuple], gap: str = "") -> str:
    if not entry.tested_by:
        return '<td class="na">not testable from data</td>'
    if gap and not rows:
        return f'<td class="na">{html.escape(gap.split(":")[0])}</td>'
    if not rows:
        return '<td class="fail">NOT TESTED: no expectation carries this id</td>'
    failed = sum(1 for r in rows if not r[6])
    if failed:
        return f'<td class="fail">tested: {failed} of {len(rows)} expectations failed</td>'
    return f'<td class="pass">tested: all {len(rows)} expectations passed</td>'


def _entry_rows(
    entries: list[Entry],
    results: list[tuple],
    unit: str,
    criteria: bool,
    not_public: dict[str, list[str]] | None = None,
) -> str:
    out = []
    for entry in entries:
        rows = results_for(entry, results)
        gap = public_data_gap(entry, rows, not_public or {})
        tested = max((r[4] for r in rows), default=0)
        failed_ids = sum(r[5] for r in rows)
        how = (
            "<br>".join(
                f"<code>{html.escape(r[1])}</code>: {html.escape(r[7])}"
                + (f" <i>(tolerance {html.escape(r[8])})</i>" if r[8] else "")
                for r in rows
            )
            if entry.tested_by
            else html.escape(entry.reason or "")
        )
        if gap and not rows:
            how = html.escape(gap[0].upper() + gap[1:])
        note = f"<br><i>{html.escape(entry.note)}</i>" if entry.note else ""
        if gap and rows:
            note += f"<br><i>{html.escape(gap[0].upper() + gap[1:])}</i>"
        link = (
            f' (<a href="#exceptions-{html.escape(entry.id)}">exceptions</a>)'
            if failed_ids and not criteria
            else ""
        )
        applicable = f"<td>{'X' if entry.applicable else ''}</td>" if criteria else ""
        out.append(
            f"<tr><td>{html.escape(entry.id)}</td>{applicable}<td>{html.escape(entry.title)}</td>"
            f"{_status_cell(entry, rows, gap)}<td>{html.escape(entry.tested_by or '')}</td>"
            f"<td>{how}{note}</td>"
            f'<td class="num">{tested if entry.tested_by and rows else ""}</td>'
            f'<td class="num">{failed_ids if entry.tested_by and rows else ""}{link}</td></tr>'
        )
    head = (
        f"<tr><th>id</th>{'<th>Exhibit D</th>' if criteria else ''}<th>what</th><th>status</th>"
        f"<th>suite</th><th>expectations (or why not testable)</th><th>{unit} tested</th>"
        f"<th>{unit} failed</th></tr>"
    )
    return f"<table>{head}{''.join(out)}</table>"


def write_auditor_report(
    con,
    deal_id: str,
    trust_name: str,
    out: Path,
    data_docs: Path | None,
    as_of: tuple[tuple[str, str], ...] = (),
    provenance: tuple[str, ...] = (),
    not_public: dict[str, list[str]] | None = None,
) -> dict[str, int]:
    """Write out/index.html, out/auditor_report.pdf and out/exceptions.csv for one trust.
    `as_of`: (label, value) of the latest Collection Period and Distribution Date covered.
    `not_public`: for a trust defined from its SEC filings, representation id -> why the public
    data cannot test it (quality.suites.not_testable_from_filings)."""
    out.mkdir(parents=True, exist_ok=True)
    catalog = load_catalog()
    results = con.execute(
        "select suite_name, expectation_name, representation, also_tests, element_count, "
        "unexpected_count, is_success, rule_text, tolerance_text from quality.expectation_results "
        "where deal_id in (?, 'shelf') order by suite_name, expectation_name",
        [deal_id],
    ).fetchall()
    register = con.execute(
        "select e.receivable_id, e.representation, e.rule_text, e.observed_value, "
        "e.discovered_date, r.repurchase_status, r.distribution_date, r.purchase_amount::varchar, "
        "r.reported_purchase_amount::varchar "
        "from marts.fct_eligibility_exception as e "
        "left join marts.fct_repurchase as r using (deal_id, receivable_id) "
        "where e.deal_id = ? order by e.representation, e.receivable_id",
        [deal_id],
    ).fetchall()
    gate = con.execute(
        "select distribution_date, is_publishable, withheld_reason from quality.certificate_gate "
        "where deal_id = ? order by distribution_date",
        [deal_id],
    ).fetchall()
    period_failures = con.execute(
        "select representation, split_part(failing_id, '/', 2), observed_value, expectation_name "
        "from quality.expectation_failures where suite_name = 'servicing_criteria' "
        "and split_part(failing_id, '/', 1) = ? order by failing_id, representation",
        [deal_id],
    ).fetchall()

    with (out / "exceptions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "receivable_id",
                "representation",
                "rule",
                "observed_value",
                "discovered_date",
                "repurchase_status",
                "repurchase_distribution_date",
                "purchase_amount",
                "reported_purchase_amount",
            ]
        )
        writer.writerows(register)

    counts: dict[str, int] = {}
    for row in register:
        counts[row[1]] = counts.get(row[1], 0) + 1
    chart = (
        bar_chart(counts, "Receivables breaching each representation")
        if counts
        else "<p>No receivable breaches any tested representation.</p>"
    )
    tested = [e for e in catalog["representations"] if e.tested_by]
    withheld = [g for g in gate if not g[1]]
    public_line = (
        "The Receivable Schedule was built from the trust's SEC EX-102 filing: "
        f"{sum(1 for e in tested if e.id in not_public and not results_for(e, results))} of "
        "those are not testable from public data, and are marked so. "
        if not_public is not None
        else ""
    )
    exceptions = []
    for representation in sorted(counts):
        rows = [r for r in register if r[1] == representation]
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape('' if v is None else str(v))}</td>" for v in row)
            + "</tr>"
            for row in rows
        )
        exceptions.append(
            f'<h3 id="exceptions-{html.escape(representation)}">{html.escape(representation)}: '
            f"{len(rows)} receivables</h3><table><tr><th>receivable</th><th>representation</th>"
            "<th>rule</th><th>observed</th><th>discovered</th><th>repurchase</th>"
            "<th>Distribution Date</th><th>Purchase Amount</th><th>on the tape</th></tr>"
            f"{body}</table>"
        )
    failures = "".join(
        f"<tr><td>{html.escape(p)}</td><td>{html.escape(r)}</td><td>{html.escape(e)}</td>"
        f"<td>{html.escape(v)}</td></tr>"
        for r, p, v, e in period_failures
    )
    gate_rows = "".join(
        f"<tr><td>{d}</td><td>{html.escape(reason or '')}</td></tr>" for d, _ok, reason in withheld
    )
    docs = (
        '<p>Great Expectations Data Docs: <a href="'
        f'{html.escape(os.path.relpath(data_docs, out))}">the suites and every validation</a></p>'
        if data_docs
        else ""
    )
    page = (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(trust_name)}: auditor report</title>"
        f"<style>{STYLE}</style></head><body><h1>{html.escape(trust_name)}: eligibility and "
        "servicing criteria, auditor report</h1>"
        + "".join(f"<p>{html.escape(k)}: {html.escape(v)}</p>" for k, v in as_of)
        + f"<p>{len(catalog['representations'])} Section 2.3 items listed, {len(tested)} tested "
        f"from data, {len(catalog['representations']) - len(tested)} not testable (reasons "
        f"below). {public_line}{len(register)} breaches in the register "
        '(<a href="exceptions.csv">exceptions.csv</a>; printable: '
        '<a href="auditor_report.pdf">auditor_report.pdf</a>). '
        f"{len(gate) - len(withheld)} of {len(gate)} certificates publishable.</p>{docs}"
        f"<h2>Section 2.3 representations</h2>"
        f"{_entry_rows(catalog['representations'], results, 'rows', False, not_public)}{chart}"
        "<h2>Servicing criteria (Regulation AB Item 1122(d), Exhibit D)</h2>"
        f"{_entry_rows(catalog['servicing_criteria'], results, 'periods', True)}"
        "<h2>Collection Periods failing a servicing criterion</h2>"
        + (
            "<table><tr><th>period</th><th>criterion</th><th>expectation</th><th>observed</th>"
            f"</tr>{failures}</table>"
            if failures
            else "<p>None.</p>"
        )
        + "<h2>Certificates withheld</h2>"
        + (
            f"<table><tr><th>Distribution Date</th><th>why</th></tr>{gate_rows}</table>"
            if gate_rows
            else "<p>None.</p>"
        )
        + "<h2>Breach register</h2>"
        + ("".join(exceptions) or "<p>Empty.</p>")
        + (
            '<h2>Provenance</h2><div class="provenance">'
            + "".join(f"<p>{html.escape(line)}</p>" for line in provenance)
            + "</div>"
            if provenance
            else ""
        )
        + "</body></html>"
    )
    (out / "index.html").write_text(page, encoding="utf-8")
    document = _summary_document(trust_name, catalog, results, register, withheld, not_public)
    render_pdf(
        replace(
            document,
            facts=as_of,
            provenance=provenance,
            footer=f"{trust_name} \u00b7 Auditor report"
            + "".join(f" \u00b7 {label} {value}" for label, value in as_of[-1:]),
        ),
        out / "auditor_report.pdf",
    )
    return {"breaches": len(register), "certificates_withheld": len(withheld)}


def _summary_document(trust_name, catalog, results, register, withheld, not_public) -> Document:
    """The report's tables as a printable document: every item, its status, tested and failed."""
    rows: list[Row] = []
    for part, heading, unit in (
        ("representations", "Section 2.3 representations", "rows"),
        ("servicing_criteria", "Servicing criteria (Item 1122(d), Exhibit D)", "periods"),
    ):
        rows.append(Row("section", label=heading))
        rows.append(Row("columns", "", "", (f"{unit} tested", f"{unit} failed")))
        for entry in catalog[part]:
            found = results_for(entry, results)
            gap = public_data_gap(entry, found, not_public or {})
            if not entry.tested_by:
                status, counts = f"not testable from data: {entry.reason}", ("", "")
            elif gap and not found:
                status, counts = gap, ("", "")
            else:
                failed = sum(1 for r in found if not r[6])
                status = (
                    f"tested by {entry.tested_by}: {len(found) - failed} of {len(found)} passed"
                    + (f" ({gap})" if gap else "")
                )
                counts = (str(max((r[4] for r in found), default=0)), str(sum(r[5] for r in found)))
            mark = " [X]" if entry.applicable else ""
            rows.append(Row("line", entry.id, f"{entry.title}{mark}. {status}", counts))
    rows.append(Row("section", label="Certificates withheld"))
    rows += [Row("line", str(date), reason or "") for date, _ok, reason in withheld] or [
        Row("line", "", "None.")
    ]
    return Document(
        title="ELIGIBILITY AND SERVICING CRITERIA: AUDITOR REPORT",
        subtitles=(trust_name, f"{len(register)} breaches in the register (exceptions.csv)"),
        facts=(),
        rows=tuple(rows),
    )
