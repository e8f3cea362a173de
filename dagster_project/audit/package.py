"""The auditor's package of one trust and Collection Period: a folder (and a zip of it) an auditor
files.

    index.html, package.pdf    the summary: parameters, counts, the tie-out checklist, the criteria
    exceptions.csv             every exception with its status as of the Distribution Date
    exception_history.csv      every status change up to that date
    sample.csv                 the seeded attribute sample of the cutoff pool (audit/sampling.py)
    tieouts.csv                the certificate's identities for the Distribution Date
    aging.csv                  reconciling items that appeared up to the period (1122(d)(2)(vii))
    criteria.csv               every 2.3 representation and 1122(d) criterion: tested (evidence) or
                               not testable (why)
    data_docs/                 the Great Expectations Data Docs of the published build about
                               the trust: its own suites and the shelf's servicing criteria
    manifest.json              the SHA-256 of every file above and of every delivery behind them

`python -m dagster_project.audit --deal-id ID --period YYYY-MM --out DIR` writes one from the
published warehouse; the publication writes each trust's latest one.
"""

import csv
import datetime as dt
import json
import shutil
import zipfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from dagster_project.audit.sampling import sample_listing, sample_size
from dagster_project.checksums import sha256
from dagster_project.deal import Deal
from dagster_project.reports.auditor import load_catalog, results_for
from dagster_project.reports.data_docs import trust_data_docs
from dagster_project.reports.document import Document, Row
from dagster_project.reports.html_render import render_html
from dagster_project.reports.pdf_render import render_pdf

COMPRESSED = {".gif", ".png", ".jpg", ".jpeg", ".ico", ".woff", ".woff2"}  # images and web fonts


@dataclass(frozen=True)
class SamplePlan:
    """How many receivables to draw: a fixed count, or the size for a confidence, a tolerable
    and an expected error rate; and the seed (default: the Closing Date as YYYYMMDD)."""

    confidence: Fraction = Fraction(95, 100)
    tolerable: Fraction = Fraction(5, 100)
    expected: Fraction = Fraction(25, 1000)
    count: int | None = None
    seed: int | None = None

    def size(self) -> int:
        return self.count or sample_size(self.confidence, self.tolerable, self.expected)

    def seed_for(self, deal: Deal) -> int:
        return self.seed if self.seed is not None else int(f"{deal.closing_date:%Y%m%d}")

    def describe(self, deal: Deal) -> str:
        how = (
            f"a fixed count of {self.count}"
            if self.count
            else f"{self.size()}: {float(self.confidence):.0%} confidence, "
            f"{float(self.tolerable):.2%} tolerable, {float(self.expected):.2%} expected error"
        )
        return f"{how}; seed {self.seed_for(deal)}"


def _write_csv(path: Path, header: list[str], rows) -> int:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        count = 0
        for row in rows:
            writer.writerow(["" if v is None else v for v in row])
            count += 1
    return count


STATUS_AS_OF = """
select e.exception_id, e.kind, e.rule, e.receivable_id, e.collection_period, e.field,
    e.value_found, e.value_expected, e.tolerance, min(h.event_on) as opened_on,
    arg_max(h.status, (h.event_on, h.recorded_at)) as status,
    max(h.event_on) as status_on, arg_max(h.detail, (h.event_on, h.recorded_at)) as detail
from quality.audit_exceptions as e
inner join quality.audit_exception_history as h using (deal_id, exception_id)
where e.deal_id = $deal_id and h.event_on <= $as_of
group by all
order by e.kind, e.rule, e.exception_id
"""


def write_package(
    con,
    deal: Deal,
    period: str,
    out: Path,
    plan: SamplePlan,
    data_docs: Path | None = None,
    share: bool = False,
) -> dict:
    """The package of `deal`'s Collection Period `period` in `out` (replaced), from the
    warehouse `con`, with the part of the published Data Docs folder `data_docs` about the trust
    (the validations its published figures rest on); returns what it holds (counts). `share`:
    the Data Docs' files are hard links (warehouse.share_file), for the publication, whose
    reports folder holds both; a package written for someone else gets copies, its own to keep
    or edit."""
    calendar = con.execute(
        "select distribution_date, collection_period_end_date from "
        "staging.stg_deal__payment_calendar where deal_id = ? and collection_period = ?",
        [deal.deal_id, period],
    ).fetchone()
    if calendar is None:
        raise ValueError(f"{period} is not a Collection Period of {deal.deal_id}")
    distribution_date, _period_end = calendar
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if data_docs is not None and data_docs.is_dir():
        trust_data_docs(data_docs, out / "data_docs", deal.deal_id, share)
    params = {"deal_id": deal.deal_id, "as_of": distribution_date}
    status = con.execute(STATUS_AS_OF, params).fetchall()
    counts = {
        "exceptions": _write_csv(
            out / "exceptions.csv",
            [
                "exception_id",
                "kind",
                "rule",
                "receivable_id",
                "collection_period",
                "field",
                "value_found",
                "value_expected",
                "tolerance",
                "opened_on",
                "status",
                "status_on",
                "detail",
            ],
            status,
        ),  # fmt: skip
        "status_changes": _write_csv(
            out / "exception_history.csv",
            ["exception_id", "event_on", "status", "detail"],
            con.execute(
                "select exception_id, event_on, status, detail from "
                "quality.audit_exception_history where deal_id = $deal_id and event_on <= $as_of "
                "order by exception_id, event_on, recorded_at",
                params,
            ).fetchall(),
        ),
    }
    sample = sample_listing(con, deal, plan.size(), plan.seed_for(deal))
    counts["sampled_receivables"] = len({r["receivable_id"] for r in sample})
    counts["sample_attributes"] = _write_csv(
        out / "sample.csv",
        ["draw", "receivable_id", "representation", "attribute", "value", "rule", "tolerance",
         "result"],
        ([r[k] for k in ("draw", "receivable_id", "representation", "attribute", "value", "rule",
                          "tolerance", "result")] for r in sample),
    )  # fmt: skip
    tieouts = con.execute(
        "select tieout, identity, class_id, reported_amount, computed_amount, difference_amount, "
        "is_tied_out from marts.rpt_certificate_tieouts where deal_id = ? "
        "and distribution_date = ? order by check_order, class_id",
        [deal.deal_id, distribution_date],
    ).fetchall()
    counts["tieouts"] = _write_csv(
        out / "tieouts.csv",
        ["tieout", "identity", "class_id", "reported", "computed", "difference", "holds"],
        tieouts,
    )
    counts["tieouts_failed"] = sum(1 for t in tieouts if not t[6])
    aging = con.execute(
        "select receivable_id, figure, first_collection_period, last_collection_period, "
        "first_difference_amount, resolved_collection_period, age_days, "
        "is_resolved_within_30_days, is_resolved_within_90_days, is_late "
        "from marts.rpt_reconciliation_aging where deal_id = ? "
        "and first_collection_period <= ? order by first_collection_period, receivable_id",
        [deal.deal_id, period],
    ).fetchall()
    counts["reconciling_items"] = _write_csv(
        out / "aging.csv",
        ["receivable_id", "figure", "appeared_in", "last_in", "difference", "resolved_in",
         "age_days", "resolved_within_30_days", "resolved_within_90_days", "late"],
        aging,
    )  # fmt: skip
    counts["reconciling_items_late"] = sum(1 for a in aging if a[9])
    criteria = _criteria(con, deal)
    counts["criteria"] = _write_csv(
        out / "criteria.csv",
        ["part", "id", "title", "applicable", "status", "evidence"],
        criteria,
    )
    document = _summary(deal, period, distribution_date, plan, counts, status, tieouts, criteria)
    (out / "index.html").write_text(render_html(document), encoding="utf-8")
    render_pdf(document, out / "package.pdf")
    _manifest(con, deal, period, out)
    zip_path = out.with_suffix(".zip")
    zip_path.unlink(missing_ok=True)  # a new file: the old one may be shared (share_tree)
    # deflate's fastest level (half the time of the default for an archive 3 % larger); the Data
    # Docs' images are stored as they are (compressed already: deflating them gains nothing)
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in sorted(p for p in out.rglob("*") if p.is_file()):
            method = zipfile.ZIP_STORED if path.suffix in COMPRESSED else zipfile.ZIP_DEFLATED
            archive.write(path, f"{out.name}/{path.relative_to(out).as_posix()}", method)
    return counts


def _criteria(con, deal: Deal) -> list[tuple]:
    results = con.execute(
        "select suite_name, expectation_name, representation, also_tests, element_count, "
        "unexpected_count, is_success from quality.expectation_results "
        "where deal_id in (?, 'shelf') order by suite_name, expectation_name",
        [deal.deal_id],
    ).fetchall()
    rows = []
    for part, entries in load_catalog().items():
        for entry in entries:
            found = results_for(entry, results)
            if not entry.tested_by:
                status, evidence = f"not testable from data: {entry.reason}", ""
            else:
                failed = sum(1 for r in found if not r[6])
                rows_failed = sum(r[5] for r in found)
                status = f"tested by {len(found)} expectation(s): " + (
                    "all hold" if not failed else f"{failed} failed, {rows_failed} rows"
                )
                evidence = "; ".join(f"{r[0]} {r[1]}: {r[4]} tested, {r[5]} failed" for r in found)
            rows.append((part, entry.id, entry.title, "X" if entry.applicable else "", status,
                         evidence))  # fmt: skip
    return rows


def _manifest(con, deal: Deal, period: str, out: Path) -> None:
    deliveries = con.execute(
        "select file_kind, scope, file_path, sha256 from raw.deliveries "
        "where deal_id in (?, 'shelf') and status = 'loaded' "
        "and (scope <= ? or scope not like '____-__') order by scope, file_kind",
        [deal.deal_id, period],
    ).fetchall()
    manifest = {
        "deal_id": deal.deal_id,
        "collection_period": period,
        "written_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "files": {
            p.relative_to(out).as_posix(): sha256(p)
            for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "manifest.json"
        },
        "deliveries": [
            {"file_kind": k, "scope": s, "file": Path(f).name, "sha256": h}
            for k, s, f, h in deliveries
        ],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def verify(folder: Path) -> list[str]:
    """The files of a package whose SHA-256 differs from its manifest's (or that are missing)."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return [
        name
        for name, digest in manifest["files"].items()
        if not (folder / name).exists() or sha256(folder / name) != digest
    ]


def _summary(deal, period, distribution_date, plan, counts, status, tieouts, criteria):
    by_status: dict[str, int] = {}
    for row in status:
        by_status[row[10]] = by_status.get(row[10], 0) + 1
    rows = [Row("section", label="Exceptions (exceptions.csv, exception_history.csv)")]
    rows += [Row("line", "", f"{s}", (str(n),)) for s, n in sorted(by_status.items())] or [
        Row("line", "", "None.")
    ]
    rows.append(Row("section", label="Certificate tie-outs (tieouts.csv)"))
    kinds: dict[str, list[bool]] = {}
    for t in tieouts:
        kinds.setdefault(t[0], []).append(bool(t[6]))
    rows += [
        Row("line", "", f"{kind}: {sum(ok)} of {len(ok)} hold", ("yes" if all(ok) else "NO",))
        for kind, ok in kinds.items()
    ]
    rows.append(Row("section", label="Reconciling items, 1122(d)(2)(vii) (aging.csv)"))
    rows.append(
        Row("line", "", f"{counts['reconciling_items']} items, "
            f"{counts['reconciling_items_late']} open or resolved after 90 days")
    )  # fmt: skip
    rows.append(Row("section", label="Criteria matrix (criteria.csv)"))
    rows += [Row("line", c[1], f"{c[2]}{' [X]' if c[3] else ''}. {c[4]}") for c in criteria]
    return Document(
        title="AUDITOR'S PACKAGE",
        subtitles=(deal.trust_name, f"Collection Period {period}"),
        facts=(
            ("Distribution Date", str(distribution_date)),
            ("Sample (sample.csv)", f"{counts['sampled_receivables']} receivables, cutoff pool"),
            ("Sample size and seed", plan.describe(deal)),
            (
                "Files",
                "manifest.json lists the SHA-256 of each file and of every delivery behind them",
            ),
        ),  # fmt: skip
        rows=tuple(rows),
        footer=f"{deal.trust_name} · auditor's package · Collection Period {period}",
    )
