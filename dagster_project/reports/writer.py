"""Write the documents people read from a built warehouse into a reports folder.

    index.html                                     the shelf: each trust, its latest status
    <deal_id>/index.html                           the trust's Distribution Dates, newest first
    <deal_id>/certificates/certificate_<date>.html/.pdf   Exhibit A, every line
    <deal_id>/statements/statement_<date>.html/.pdf       Section 4.9
    <deal_id>/certificates/versions/...            earlier versions of restated certificates
    <deal_id>/performance.html                     plots with their data tables
    <deal_id>/auditor/index.html, auditor_report.pdf, exceptions.csv
    <deal_id>/auditor/packages/<YYYY-MM>/(.zip)    the auditor's package of the latest published
                                                   Collection Period (audit/package.py); earlier
                                                   publications' packages are kept as they were
    shelf.html, data_docs/                         the trusts by deal age; the suites' evidence
    <deal_id>/quarantine.csv                       the rows of the rejected deliveries that stand

A Distribution Date the certificate gate withholds gets a page that says why, and no figures.
Every printed amount comes from the warehouse's DECIMAL text; plots convert to floats only to draw.
Rendering is serial in this process (no worker outlives the run).
"""

import csv
import datetime as dt
import hashlib
import html
import os
from dataclasses import replace
from pathlib import Path

import duckdb

from dagster_project.audit.package import SamplePlan, write_package
from dagster_project.certificate_versions import changes, load_versions
from dagster_project.deal import Deal, DealFileError, load_shelf
from dagster_project.quality.observations import SCHEDULE_REJECTED
from dagster_project.reports import html_render, pdf_render
from dagster_project.reports.auditor import write_auditor_report
from dagster_project.reports.data_docs import publish_data_docs
from dagster_project.reports.document import (
    certificate_document,
    restated_banner,
    statement_document,
    withheld_document,
)
from dagster_project.reports.html_render import render_html
from dagster_project.reports.pdf_render import render_pdf
from dagster_project.reports.performance import write_performance
from dagster_project.reports.provenance import Provenance
from dagster_project.reports.shelf import write_shelf_report
from dagster_project.warehouse import share_file, table_exists

PROJECT_ROOT = Path(__file__).resolve().parents[2]

INDEX_STYLE = """
body { font-family: Helvetica, Arial, sans-serif; max-width: 64em; margin: 2em auto; color: #111; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.withheld { color: #a40000; font-weight: bold; } .published { color: #176317; }
.restated { color: #8a5a00; font-weight: bold; } nav a { margin-right: 1.2em; }
"""


def reports_dir() -> Path:
    return Path(os.environ.get("CAOT_REPORTS_DIR") or PROJECT_ROOT / "data" / "reports")


def _version_stem(distribution, version: int) -> str:
    return f"certificates/versions/certificate_{distribution}_v{version}"


def _page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{INDEX_STYLE}</style></head><body>{body}</body></html>"
    )


# Each document's digest (document_digest) as a trust's folder was written, one `<digest>  <stem>`
# line per document: what the next publication compares with.
DIGESTS = ".document_digests"
# A document's pages depend on it and on the code that lays it out: the renderers' sources are
# part of every digest, so a change to either renders every document again.
RENDERERS = hashlib.sha256(
    b"".join(Path(module.__file__).read_bytes() for module in (html_render, pdf_render))
).hexdigest()


def document_digest(document) -> str:
    """What a document's HTML and PDF are rendered from: its content (a frozen dataclass of text,
    whose repr is the same in every process) and the renderers."""
    return hashlib.sha256(f"{RENDERERS}\n{document!r}".encode()).hexdigest()


class _Writer:
    """Writes each document as HTML and PDF under `out`. A document whose digest is the one it
    had in the reports already published (`published`) takes that HTML and PDF as they are (a
    month changes only a few of them); the others are rendered. `save` writes the digests."""

    def __init__(self, out: Path, published: Path | None):
        self.out = out
        self.published = published
        self.digests: dict[str, str] = {}
        self.before = _read_digests(published / DIGESTS) if published is not None else {}

    def __call__(self, document, stem: str) -> None:
        (self.out / stem).parent.mkdir(parents=True, exist_ok=True)
        digest = self.digests[stem] = document_digest(document)
        if self.published is not None and self.before.get(stem) == digest:
            pages = [self.published / f"{stem}{suffix}" for suffix in (".html", ".pdf")]
            if all(page.exists() for page in pages):
                for page in pages:
                    share_file(page, self.out / f"{stem}{page.suffix}")
                return
        (self.out / f"{stem}.html").write_text(render_html(document), encoding="utf-8")
        render_pdf(document, self.out / f"{stem}.pdf")

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / DIGESTS).write_text(
            "".join(f"{digest}  {stem}\n" for stem, digest in sorted(self.digests.items())),
            encoding="utf-8",
        )


def _read_digests(path: Path) -> dict[str, str]:
    """{stem: digest} from a digests file; none when it is missing."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    return {stem: digest for digest, _, stem in (line.partition("  ") for line in lines)}


def write_reports(
    warehouse: Path, out: Path, data_docs: Path | None = None, published: Path | None = None
) -> dict[str, int]:
    """Every trust's documents from the warehouse file `warehouse` (read-only) into `out`, with the
    Great Expectations evidence they rest on (from the Data Docs site whose index.html is
    `data_docs`), so that every link is relative and the folder can be copied or served.
    `published`: the reports folder published before, whose PDFs are kept for the documents that
    did not change."""
    out.mkdir(parents=True, exist_ok=True)
    data_docs = publish_data_docs(data_docs, out / "data_docs") if data_docs else None
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        trusts = con.execute(
            "select deal_id, trust_name, servicer_name from staging.stg_deal__deals "
            "order by cutoff_date, deal_id"
        ).fetchall()
        gated = {
            deal_id
            for (deal_id,) in con.execute(
                "select distinct deal_id from quality.certificate_gate"
            ).fetchall()
        }
        versions = load_versions(con)
        deals = _shelf_deals()
        totals = {"certificates": 0, "certificates_withheld": 0, "trusts": 0}
        rows = []
        schedules_rejected = (
            dict(con.execute(SCHEDULE_REJECTED).fetchall())
            if table_exists(con, "raw", "deliveries")
            else {}
        )
        for deal_id, trust_name, servicer in trusts:
            if deal_id not in gated:
                # no delivery loaded: its Receivable Schedule rejected (the tapes wait), or none
                rejected = schedules_rejected.get(deal_id)
                why = f"its Receivable Schedule was rejected ({rejected})" if rejected else ""
                rows.append((deal_id, trust_name, None, why))
                continue
            write = _Writer(out / deal_id, published / deal_id if published else None)
            counts = _write_trust(
                con, (deal_id, trust_name, servicer), deals.get(deal_id), write, versions, data_docs
            )
            write.save()
            totals["certificates"] += counts["certificates"]
            totals["certificates_withheld"] += counts["certificates_withheld"]
            totals["trusts"] += 1
            rows.append((deal_id, trust_name, counts, ""))
        generated = dt.datetime.now(dt.UTC)
        provenance = tuple(
            f"{deal_id}: {line}"
            for deal_id, _name, counts, _why in rows
            if counts is not None
            for line in Provenance(con, deal_id).for_trust(generated)
        )
        write_shelf_report(con, out / "shelf.html", provenance)
    finally:
        con.close()
    (out / "index.html").write_text(_shelf_index(rows), encoding="utf-8")
    return totals


def _shelf_deals() -> dict[str, Deal]:
    """The shelf's deal files by deal_id, read once for every trust's documents (none when the
    shelf's folder cannot be read: the documents that need a deal file are then left out)."""
    try:
        return {deal.deal_id: deal for deal in load_shelf()}
    except DealFileError:
        return {}


def _auditor_package(con, deal: Deal | None, periods, write: _Writer, data_docs) -> str:
    """The auditor's package of the trust's latest published Collection Period (its folder and
    zip), beside the zips of the packages earlier publications wrote (kept as they were, shared
    with them); the index's link to it. `deal`: None for a trust whose deal file is not in this
    shelf's folder (no package)."""
    latest = next((p for p in reversed(periods) if p[4]), None)
    if deal is None or latest is None or not table_exists(con, "quality", "audit_exceptions"):
        return ""
    packages = write.out / "auditor" / "packages"
    earlier = write.published / "auditor" / "packages" if write.published is not None else None
    if earlier is not None and earlier.is_dir():
        packages.mkdir(parents=True, exist_ok=True)
        for archive in earlier.glob("*.zip"):
            share_file(archive, packages / archive.name)
    period = latest[6]
    docs = data_docs.parent if data_docs else None
    write_package(con, deal, period, packages / period, SamplePlan(), docs, share=True)
    return f'<a href="auditor/packages/{period}/index.html">auditor\'s package ({period})</a>'


def _not_public(con, deal: Deal | None) -> dict[str, list[str]] | None:
    """For a trust whose Receivable Schedule was built from an SEC EX-102 filing, what the public
    data cannot test (quality.suites); None for a servicer's schedule or no deal file."""
    from dagster_project.quality.runs import schedule_from_filings
    from dagster_project.quality.suites import not_testable_from_filings

    if deal is None:
        return None
    return not_testable_from_filings(deal) if schedule_from_filings(con, deal) else None


def _shelf_index(rows) -> str:
    e = html.escape
    body = []
    for deal_id, trust_name, counts, why in rows:
        if counts is None:
            body.append(
                f"<tr><td>{e(trust_name)}</td><td>{e(deal_id)}</td>"
                f'<td colspan="4">no deliveries loaded{": " + e(why) if why else ""}</td></tr>'
            )
            continue
        status = (
            '<span class="withheld">latest withheld</span>'
            if counts["latest_withheld"]
            else '<span class="published">published</span>'
        )
        body.append(
            f'<tr><td><a href="{e(deal_id)}/index.html">{e(trust_name)}</a></td><td>{e(deal_id)}'
            f"</td><td>{counts['latest_date']}</td><td>{status}</td>"
            f"<td>{counts['certificates']} published, {counts['certificates_withheld']} withheld"
            f"</td><td>{_rejected_cell(deal_id, counts['deliveries_rejected'])}</td></tr>"
        )
    return _page(
        "Servicing reports",
        "<h1>Servicing reports: the shelf</h1>"
        '<p><a href="shelf.html">The trusts compared by deal age</a> (static-pool curves: pool '
        "factor, losses, 60+ delinquency, prepayment, excess spread)</p>"
        "<table><tr><th>trust</th><th>deal id</th>"
        "<th>latest Distribution Date</th><th>status</th><th>certificates</th>"
        "<th>deliveries rejected</th></tr>" + "".join(body) + "</table>",
    )


def _write_trust(
    con, trust: tuple[str, str, str], deal: Deal | None, write: _Writer, versions, data_docs
) -> dict:
    """trust: (deal_id, trust name, servicer name); deal: its deal file, None when the shelf's
    folder has none."""
    deal_id, trust_name, servicer = trust
    out = write.out
    periods = con.execute(
        "select calendar.distribution_date, calendar.determination_date, "
        "calendar.collection_period_start_date, calendar.collection_period_end_date, "
        "gate.is_publishable, gate.withheld_reason, calendar.collection_period "
        "from staging.stg_deal__payment_calendar as calendar "
        "inner join quality.certificate_gate as gate "
        "on calendar.deal_id = gate.deal_id "
        "and calendar.distribution_date = gate.distribution_date "
        "where calendar.deal_id = ? order by calendar.period_number",
        [deal_id],
    ).fetchall()
    lines = con.execute(
        "select distribution_date, line, label, value, kind, key, section, group_label "
        "from marts.rpt_servicer_certificate where deal_id = ? "
        "order by distribution_date, line_order",
        [deal_id],
    ).fetchall()
    statements = con.execute(
        "select distribution_date, item, description, class_id, amount::varchar, kind "
        "from marts.rpt_noteholder_statement where deal_id = ? "
        "order by distribution_date, item_order, detail_order",
        [deal_id],
    ).fetchall()
    notes: dict = {}
    for date, note in con.execute(
        "select distribution_date, note from marts.rpt_certificate_notes where deal_id = ? "
        "order by distribution_date, note_order",
        [deal_id],
    ).fetchall():
        notes.setdefault(date, []).append(note)
    by_date: dict = {}
    for date, line, label, value, kind, key, section, group in lines:
        by_date.setdefault(date, []).append(
            {"line": line, "label": label, "value": value, "kind": kind, "key": key,
             "section": section, "group_label": group}
        )  # fmt: skip
    index = []
    counts = {"certificates": 0, "certificates_withheld": 0}
    provenance = Provenance(con, deal_id)
    for distribution, determination, start, end, publishable, reason, collection in periods:
        period = {
            "distribution_date": distribution,
            "determination_date": determination,
            "collection_period_start_date": start,
            "collection_period_end_date": end,
        }
        certificate = f"certificates/certificate_{distribution}"
        statement = f"statements/statement_{distribution}"
        history = versions.get((deal_id, distribution), [])
        layout = by_date.get(distribution, [])
        kept = history if not publishable else history[:-1]
        for version in kept:  # every earlier version stays readable
            old = [{**row, "value": version.values.get(row["line"])} for row in layout]
            write(
                certificate_document(trust_name, period, old, servicer=servicer),
                _version_stem(distribution, version.version),
            )
        if not publishable:
            counts["certificates_withheld"] += 1
            standing = history[-1] if history else None
            for stem, title, up in (
                (certificate, "Monthly Servicer's Certificate", ""),
                (statement, "Statement to Noteholders", "../certificates/"),
            ):
                link = (
                    (
                        f"version {standing.version} of {standing.published_at:%Y-%m-%d}",
                        f"{up}versions/certificate_{distribution}_v{standing.version}.html",
                    )
                    if standing
                    else None
                )
                write(withheld_document(trust_name, title, distribution, reason, link), stem)
            index.append(
                (distribution, f'<span class="withheld">withheld</span>: {html.escape(reason)} '
                 f'(<a href="{certificate}.html">page</a>)')
            )  # fmt: skip
            continue
        counts["certificates"] += 1
        computed = (
            f"version {history[-1].version}, {history[-1].published_at:%Y-%m-%d %H:%M} UTC"
            if history
            else "in this run"
        )
        sources = provenance.for_period(collection, computed)
        document = certificate_document(
            trust_name, period, layout, tuple(notes.get(distribution, ())), servicer
        )
        document = replace(document, provenance=sources)
        status = '<span class="published">published</span>'
        if len(history) > 1:
            labels = {row["line"]: row["label"] for row in layout}
            changed = [
                (line, labels.get(line, ""), old, new)
                for line, old, new in changes(history[-2], history[-1])
            ]
            banner = restated_banner(
                history[-1].version, history[-1].published_at, history[-2], changed
            )
            document = replace(document, banner=banner)
            earlier = ", ".join(
                f'<a href="{_version_stem(distribution, v.version)}.html">v{v.version}</a>'
                for v in history[:-1]
            )
            status = (
                f'<span class="restated">restated, version {history[-1].version}</span> '
                f"(earlier: {earlier})"
            )
        write(document, certificate)
        items = [r[1:] for r in statements if r[0] == distribution]
        write(
            replace(statement_document(trust_name, distribution, items), provenance=sources),
            statement,
        )
        index.append(
            (distribution, f"{status}: certificate (<a href=\"{certificate}.html\">HTML</a>, "
             f'<a href="{certificate}.pdf">PDF</a>), statement to noteholders '
             f'(<a href="{statement}.html">HTML</a>, <a href="{statement}.pdf">PDF</a>)')
        )  # fmt: skip
    sources = provenance.for_trust(dt.datetime.now(dt.UTC))
    write_performance(con, deal_id, trust_name, out / "performance.html", sources)
    last = periods[-1] if periods else None
    as_of = (
        (
            ("Collection Period", f"{last[2]:%m/%d/%y}-{last[3]:%m/%d/%y}"),
            ("Distribution Date", f"{last[0]:%m/%d/%Y}"),
        )
        if last
        else ()
    )
    auditor = write_auditor_report(
        con, deal_id, trust_name, out / "auditor", data_docs, as_of, sources,
        _not_public(con, deal),
    )  # fmt: skip
    package = _auditor_package(con, deal, periods, write, data_docs)
    docs_link = (
        f' <a href="{html.escape(os.path.relpath(data_docs, out))}">'
        "Great Expectations Data Docs</a>"
        if data_docs
        else ""
    )
    rows = "".join(
        f"<tr><td>{date}</td><td>{text}</td></tr>" for date, text in sorted(index, reverse=True)
    )
    rejected = _rejected_deliveries(con, deal_id, out / "quarantine.csv")
    (out / "index.html").write_text(
        _page(
            trust_name,
            f'<h1>{html.escape(trust_name)}</h1><nav><a href="../index.html">all trusts</a>'
            '<a href="performance.html">deal performance</a>'
            f'<a href="auditor/index.html">auditor report</a>{package}{docs_link}</nav>'
            f"{rejected['html']}"
            "<h2>Distribution Dates</h2><table><tr><th>Distribution Date</th><th>status</th></tr>"
            f"{rows}</table>",
        ),
        encoding="utf-8",
    )
    latest = max(index)[0] if index else None
    latest_withheld = bool(periods) and not periods[-1][4]
    return {
        **counts,
        "breaches": auditor["breaches"],
        "deliveries_rejected": rejected["count"],
        "latest_date": latest,
        "latest_withheld": latest_withheld,
    }


STANDING_REJECTIONS = """
select * from raw.deliveries as delivery
where delivery.deal_id = $deal and delivery.status = 'rejected'
    and not exists (select 1 from raw.deliveries as later where later.deal_id = delivery.deal_id
        and later.scope = delivery.scope and later.file_kind = delivery.file_kind
        and later.status in ('loaded', 'superseded') and later.loaded_at > delivery.loaded_at)
"""

REJECTED = f"""
select delivery.scope, delivery.file_kind, delivery.file_path,
    timezone('UTC', delivery.loaded_at) as rejected_at_utc, delivery.finding_count,
    delivery.first_finding,
    exists (select 1 from raw.deliveries as standing where standing.deal_id = delivery.deal_id
        and standing.scope = delivery.scope and standing.file_kind = delivery.file_kind
        and standing.status = 'loaded') as has_loaded
from ({STANDING_REJECTIONS}) as delivery
order by delivery.loaded_at desc, delivery.scope, delivery.file_kind
"""

QUARANTINE = f"""
select quarantine.scope, quarantine.file_kind, quarantine.file_path, quarantine.row_number,
    quarantine.field, quarantine.reason, quarantine.value,
    timezone('UTC', quarantine.quarantined_at) as quarantined_at_utc
from raw.quarantine as quarantine
where quarantine.delivery_id in (select delivery_id from ({STANDING_REJECTIONS}))
order by quarantine.scope, quarantine.file_kind, quarantine.row_number
"""


def _rejected_deliveries(con, deal_id: str, csv_path: Path) -> dict:
    """The trust's rejected deliveries not followed by a loaded one (what the operator must act
    on), as a section of its index page, with their quarantined rows in quarantine.csv."""
    rows = con.execute(REJECTED, {"deal": deal_id}).fetchall()
    if not rows:
        csv_path.unlink(missing_ok=True)
        return {"count": 0, "html": ""}
    quarantined = con.execute(QUARANTINE, {"deal": deal_id})
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([column[0] for column in quarantined.description])
        writer.writerows(quarantined.fetchall())
    e = html.escape
    body = "".join(
        f"<tr><td>{e(scope)}</td><td>{e(kind)}</td><td>{e(path)}</td>"
        f"<td>{at:%Y-%m-%d %H:%M} UTC</td><td>{count}</td><td>{e(first or '')}</td><td>"
        + (
            "the delivery loaded before stands"
            if has_loaded
            else '<span class="withheld">nothing loaded: withheld from this period on</span>'
        )
        + "</td></tr>"
        for scope, kind, path, at, count, first, has_loaded in rows
    )
    return {
        "count": len(rows),
        "html": '<h2 class="withheld">Deliveries rejected</h2><p>Each rejected file, with the '
        'first of its findings; every quarantined row is in <a href="quarantine.csv">'
        "quarantine.csv</a> (and in raw.quarantine).</p><table><tr><th>period</th><th>file</th>"
        "<th>path</th><th>rejected</th><th>findings</th><th>first finding</th>"
        f"<th>in use</th></tr>{body}</table>",
    }


def _rejected_cell(deal_id: str, count: int) -> str:
    if not count:
        return "none"
    return f'<a class="withheld" href="{html.escape(deal_id)}/index.html">{count}</a>'
