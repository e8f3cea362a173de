"""Write the documents people read from the published warehouse into data/reports/.

- certificates/certificate_<date>.html and .pdf for every Distribution Date (Exhibit A);
- statements/statement_<date>.html and .pdf (Section 4.9);
- performance.html (plots) and auditor/index.html (Section 2.3 and Exhibit D);
- index.html linking them.

A Distribution Date the certificate gate withholds (a blocking expectation failed for its period or
an earlier one) gets a page that says why, and no figures. Read-only on the published copy, so it
never blocks the pipeline. Plots convert money to floats for drawing only; every printed amount
comes from the DECIMAL columns as text.
"""

import html
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import duckdb

from dagster_project.certificate_versions import changes, load_versions
from dagster_project.quality.validation import data_docs_index
from dagster_project.reports.auditor import write_auditor_report
from dagster_project.reports.document import (
    certificate_document,
    restated_banner,
    statement_document,
    withheld_document,
)
from dagster_project.reports.html_render import render_html
from dagster_project.reports.pdf_render import render_pdf
from dagster_project.reports.performance import PLOTS, draw, render_performance
from dagster_project.reports.render_pool import render_pool

PROJECT_ROOT = Path(__file__).resolve().parents[2]

POOL_SQL = """
with cert as (
    select distribution_date,
        max(amount) filter (where key = 'ending_pool_balance') as ending_pool_balance,
        max(amount) filter (where key = 'beginning_pool_balance') as beginning_pool_balance,
        max(amount) filter (where key = 'delinquent_31_60_balance') as delinquent_31_60_balance,
        max(amount) filter (where key = 'delinquent_61_90_balance') as delinquent_61_90_balance,
        max(amount) filter (where key = 'delinquent_91_plus_balance')
            as delinquent_91_plus_balance,
        max(amount) filter (where key = 'cumulative_net_loss_percent')
            as cumulative_net_loss_percent,
        max(amount) filter (where key = 'excess_collections_amount') as excess_collections,
        max(amount) filter (where key = 'reserve_account_ending_balance') as reserve_balance,
        max(amount) filter (where key = 'required_reserve_account_amount') as required_reserve,
        max(amount) filter (where key = 'overcollateralization_amount') as overcollateralization,
        max(amount) filter (where key = 'overcollateralization_target_amount')
            as overcollateralization_target
    from marts.rpt_servicer_certificate group by distribution_date
),
counts as (
    -- paid in full during the period: left the pool other than by default or purchase
    select distribution_date,
        lag(receivables_outstanding, 1, (select count(*) from marts.dim_receivable))
            over (order by period_number) as count_begin,
        receivables_outstanding, receivables_defaulted, receivables_purchased,
        (select count(*) from marts.dim_receivable) as original_count
    from marts.fct_pool_period
)
select cert.*,
    100.0 * (count_begin - receivables_outstanding - receivables_defaulted - receivables_purchased)
        / original_count as abs_speed,
    100.0 * (1 - power(1 - (count_begin - receivables_outstanding - receivables_defaulted
        - receivables_purchased) / greatest(count_begin, 1), 12)) as cpr,
    100.0 * 12 * excess_collections / nullif(beginning_pool_balance, 0) as excess_spread_percent
from cert inner join counts using (distribution_date)
order by distribution_date
"""


def reports_dir() -> Path:
    return Path(os.environ.get("CAOT_REPORTS_DIR") or PROJECT_ROOT / "data" / "reports")


def _version_stem(distribution, version: int) -> str:
    return f"certificates/versions/certificate_{distribution}_v{version}"


class _Writer:
    """Writes each document's HTML at once and its PDF later, all PDFs on every core (rendering
    them is the slow part). A document identical to the one in `reuse` (the previous reports)
    keeps its PDF."""

    def __init__(self, out: Path, reuse: Path | None):
        self.out, self.reuse = out, reuse
        self.pending: list[tuple] = []

    def __call__(self, document, stem: str) -> None:
        (self.out / stem).parent.mkdir(parents=True, exist_ok=True)
        page = render_html(document)
        (self.out / f"{stem}.html").write_text(page, encoding="utf-8")
        if self.reuse is not None:
            before_html, before_pdf = self.reuse / f"{stem}.html", self.reuse / f"{stem}.pdf"
            if before_pdf.exists() and before_html.exists() and before_html.read_text() == page:
                shutil.copyfile(before_pdf, self.out / f"{stem}.pdf")
                return
        self.pending.append((document, self.out / f"{stem}.pdf"))

    def render_pdfs(self) -> None:
        if len(self.pending) < 8:
            for document, path in self.pending:
                render_pdf(document, path)
            return
        with render_pool() as pool:
            list(pool.map(render_pdf, *zip(*self.pending, strict=True), chunksize=8))


def write_reports(
    published: Path, out: Path | None = None, reuse: Path | None = None
) -> dict[str, int]:
    out = out or reports_dir()
    (out / "certificates").mkdir(parents=True, exist_ok=True)
    (out / "statements").mkdir(parents=True, exist_ok=True)
    # the plots draw in other processes, on every core, while this one writes the documents
    with render_pool() as plotter:
        return _write_reports(published, out, reuse, plotter)


def _write_reports(
    published: Path, out: Path, reuse: Path | None, plotter: ProcessPoolExecutor
) -> dict[str, int]:
    con = duckdb.connect(str(published), read_only=True)
    try:
        trust_name = con.execute(
            "select term_value from staging.stg_deal__terms where term_name = 'trust_name'"
        ).fetchone()[0]
        # the gate decides which Distribution Dates have a document (published or withheld)
        periods = con.execute(
            "select calendar.distribution_date, calendar.determination_date, "
            "calendar.collection_period_start_date, calendar.collection_period_end_date "
            "from staging.stg_deal__payment_calendar as calendar "
            "inner join quality.certificate_gate as gate using (distribution_date) "
            "order by calendar.period_number"
        ).fetchall()
        lines = con.execute(
            "select distribution_date, line, label, value, kind, key, section "
            "from marts.rpt_servicer_certificate order by distribution_date, line_order"
        ).fetchall()
        statements = con.execute(
            "select s.distribution_date, s.item, s.description, s.class_id, "
            "s.amount::varchar, coalesce(l.kind, 'money') "
            "from marts.rpt_noteholder_statement as s "
            "left join (select distinct key, kind from raw.certificate_layout) as l using (key) "
            "order by s.distribution_date, s.item_order, s.class_id nulls first, s.key"
        ).fetchall()
        pool = con.execute(POOL_SQL).df()
        notes = con.execute(
            "select distribution_date, class_id, class_order, ending_balance::double as "
            "ending_balance, pool_factor::double as pool_factor from marts.fct_note_distribution"
        ).df()
        gate = dict(
            (date, reason)
            for date, reason in con.execute(
                "select distribution_date, withheld_reason from quality.certificate_gate "
                "where not is_publishable"
            ).fetchall()
        )
        for column in pool.columns:
            if column != "distribution_date":
                pool[column] = pool[column].astype(float)
        plots = {key: plotter.submit(draw, key, pool, notes) for key, _title in PLOTS}
        auditor = write_auditor_report(con, out / "auditor", data_docs_index())
        versions = load_versions(con)
    finally:
        con.close()
    by_date: dict = {}
    for date, line, label, value, kind, key, section in lines:
        by_date.setdefault(date, []).append(
            {
                "line": line,
                "label": label,
                "value": value,
                "kind": kind,
                "key": key,
                "section": section,
            }
        )
    index = []
    write = _Writer(out, reuse)
    for distribution, determination, start, end in periods:
        period = {
            "distribution_date": distribution,
            "determination_date": determination,
            "collection_period_start_date": start,
            "collection_period_end_date": end,
        }
        certificate = f"certificates/certificate_{distribution}"
        statement = f"statements/statement_{distribution}"
        history = versions.get(distribution, [])
        layout = by_date.get(distribution, [])
        # every earlier version stays readable (and the standing one of a withheld date)
        kept = history if distribution in gate else history[:-1]
        for version in kept:
            lines = [{**row, "value": version.values.get(row["line"])} for row in layout]
            write(
                certificate_document(trust_name, period, lines),
                _version_stem(distribution, version.version),
            )
        if distribution in gate:
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
                write(
                    withheld_document(trust_name, title, distribution, gate[distribution], link),
                    stem,
                )
            index.append(
                f'<li>{distribution}: <b>withheld</b> (<a href="{certificate}.html">why</a>)</li>'
            )
            continue
        document = certificate_document(trust_name, period, layout)
        restated = ""
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
            restated = f" <b>restated, version {history[-1].version}</b> (earlier: {earlier})"
        write(document, certificate)
        items = [r[1:] for r in statements if r[0] == distribution]
        write(statement_document(trust_name, distribution, items), statement)
        index.append(
            f'<li>{distribution}: certificate (<a href="{certificate}.html">HTML</a>, '
            f'<a href="{certificate}.pdf">PDF</a>){restated}, statement to noteholders '
            f'(<a href="{statement}.html">HTML</a>, <a href="{statement}.pdf">PDF</a>)</li>'
        )
    write.render_pdfs()
    last = pool.iloc[-1]
    summary = [
        ("Distribution Dates", str(len(periods))),
        ("Last Distribution Date", str(periods[-1][0])),
        ("Pool Balance (last)", f"${last['ending_pool_balance']:,.2f}"),
        ("Cumulative net loss (last)", f"{last['cumulative_net_loss_percent']:.2f}%"),
    ]
    (out / "performance.html").write_text(
        render_performance(trust_name, {key: plot.result() for key, plot in plots.items()}, summary)
    )
    (out / "index.html").write_text(
        f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(trust_name)}'
        f"</title></head><body><h1>{html.escape(trust_name)}</h1>"
        f'<p><a href="performance.html">Deal performance report</a> · '
        f'<a href="auditor/index.html">Auditor report</a> (Section 2.3, Exhibit D)</p>'
        f"<ul>{''.join(index)}</ul></body></html>"
    )
    published_count = len(periods) - len(gate)
    return {
        "certificates": published_count,
        "statements": published_count,
        "certificates_withheld": len(gate),
        "breaches": auditor["breaches"],
        "performance": 1,
    }
