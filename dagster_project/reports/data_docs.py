"""The Great Expectations evidence behind a publication, copied beside the reports.

The live Data Docs site keeps each suite's last runs, and a validation made after a publication
would show there beside the ones the published certificates rest on. The reports folder gets
instead the validations current when it was published (each suite's newest run), their
expectation suites and the site's static files, with an index page of its own: Great
Expectations' index lists validations through scripts loaded from the internet, this one is plain
HTML. Every page reads offline (the site's stylesheet is expectations/data_docs.css).
"""

import datetime as dt
import html
import json
import shutil
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

from dagster_project.quality.validation import STYLESHEET
from dagster_project.warehouse import share_file, share_tree


@dataclass(frozen=True)
class Validation:
    suite: str
    run_name: str
    run_time: str  # the run folder's name: UTC, e.g. 20261205T104215.639989Z
    page: Path  # relative to the site
    evaluated: int
    failed: int


def _newest_runs(site: Path, results: Path) -> list[Validation]:
    """Each suite's newest validation, read from its stored result. Great Expectations stores a
    suite named `a.b` under a/b/<run name>/<run time>/ (the name split on its dots)."""
    newest: dict[str, Validation] = {}
    for result in sorted(results.rglob("*.json")):
        run = result.parent
        stored = json.loads(result.read_text(encoding="utf-8"))
        page = Path("validations") / result.relative_to(results).with_suffix(".html")
        if "suite_name" not in stored or not (site / page).exists():
            continue
        statistics = stored["statistics"]
        found = Validation(
            suite=stored["suite_name"],
            run_name=run.parent.name,
            run_time=run.name,
            page=page,
            evaluated=int(statistics["evaluated_expectations"]),
            failed=int(statistics["unsuccessful_expectations"]),
        )
        kept = newest.get(found.suite)
        if kept is None or found.run_time > kept.run_time:
            newest[found.suite] = found
    return sorted(newest.values(), key=lambda v: v.suite)


def suite_page(suite: str) -> Path:
    """A suite's page in the Data Docs site (its name split on its dots)."""
    return Path("expectations", *suite.split(".")).with_suffix(".html")


def _when(run_time: str) -> str:
    """20261205T104215.639989Z as 2026-12-05 10:42:15 UTC."""
    when = dt.datetime.strptime(run_time[:15], "%Y%m%dT%H%M%S")
    return f"{when:%Y-%m-%d %H:%M:%S} UTC"


MANIFEST = "validations.json"  # the validations a published folder holds (trust_data_docs)
COPY_TREE = partial(shutil.copytree, dirs_exist_ok=True)  # a folder copied (share_tree's merge)


def publish_data_docs(site_index: Path, out: Path) -> Path | None:
    """Copy the evidence of the site whose index is `site_index` into `out` (replacing what was
    there) and write its index; None when no validation has been rendered yet."""
    site = site_index.parent
    results = site.parents[1] / "validations"
    if not site_index.exists() or not results.exists():
        return None
    validations = _newest_runs(site, results)
    if not validations:
        return None
    shutil.rmtree(out, ignore_errors=True)
    return _write_site(validations, site, out, COPY_TREE, shutil.copyfile, up="All trusts")


def covers(suite: str, deal_id: str) -> bool:
    """Whether a suite is evidence about the trust: its own suites (named `<deal_id>.<suite>`)
    and the shelf's (named without a trust: the servicing criteria of every trust's periods)."""
    return suite.rpartition(".")[0] in ("", deal_id)


def trust_data_docs(published: Path, out: Path, deal_id: str, share: bool = False) -> None:
    """The part of a published Data Docs folder (publish_data_docs) that is about one trust, in
    `out`, with an index of its own: no other trust's validations (the auditor's package of a
    trust). `share`: hard links (warehouse.share_file) instead of copies. A folder published
    without its list of validations is copied whole."""
    manifest = published / MANIFEST
    copy_tree = share_tree if share else COPY_TREE
    if not manifest.exists():
        copy_tree(published, out)
        return
    validations = [
        Validation(**{**stored, "page": Path(stored["page"])})
        for stored in json.loads(manifest.read_text(encoding="utf-8"))
        if covers(stored["suite"], deal_id)
    ]
    copy_file = share_file if share else shutil.copyfile
    _write_site(validations, published, out, copy_tree, copy_file, up="The auditor's package")


def _write_site(validations: list[Validation], source: Path, out: Path, copy_tree, copy_file, up):
    """The static files, the suites' pages and the validations' pages of `source` in `out`, with
    the index (its link to the folder above named `up`) and the list of validations; returns the
    index."""
    if (source / "static").exists():
        copy_tree(source / "static", out / "static")
    for suite in sorted({v.suite for v in validations}):
        if (source / suite_page(suite)).exists():
            (out / suite_page(suite)).parent.mkdir(parents=True, exist_ok=True)
            copy_file(source / suite_page(suite), out / suite_page(suite))
    for validation in validations:
        run = validation.page.parent
        copy_tree(source / run, out / run)
    (out / MANIFEST).write_text(
        json.dumps([{**asdict(v), "page": v.page.as_posix()} for v in validations], indent=1),
        encoding="utf-8",
    )
    index = out / "index.html"
    index.write_text(_index(validations, out, up), encoding="utf-8")
    return index


def _index(validations: list[Validation], site: Path, up: str) -> str:
    css = STYLESHEET.read_text(encoding="utf-8")  # the Data Docs' own (quality/validation.py)
    rows = []
    for v in validations:
        status = (
            '<span class="passed">passed</span>'
            if v.failed == 0
            else f'<span class="failed">{v.failed} failed</span>'
        )
        page = suite_page(v.suite)
        suite_link = (
            f'<a href="{html.escape(page.as_posix())}">{html.escape(v.suite)}</a>'
            if (site / page).exists()
            else html.escape(v.suite)
        )
        rows.append(
            f"<tr><td>{suite_link}</td><td>{html.escape(v.run_name)}</td>"
            f"<td>{_when(v.run_time)}</td><td class='number'>{v.evaluated}</td>"
            f"<td>{status}</td>"
            f'<td><a href="{html.escape(v.page.as_posix())}">results</a></td></tr>'
        )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>Data Docs: the validations behind the published reports</title>"
        f"<style>{css}</style></head><body class='publication'><main>"
        "<h1>Data Docs: the validations behind the published reports</h1>"
        "<p>Each suite's validation that the published certificates, the breach register and "
        "the auditor report rest on, named after the Dagster run (the build) that ran it. The "
        "suite pages show each expectation with the clause of the Sale and Servicing Agreement "
        "(Section 2.3) or of Regulation AB Item 1122(d) (Exhibit D) it tests; the results pages "
        "show every failing row.</p>"
        "<table class='table'><thead><tr><th>suite</th><th>build</th><th>validated at</th>"
        "<th class='number'>expectations</th><th>outcome</th><th></th></tr></thead><tbody>"
        + "".join(rows)
        + f"</tbody></table><p><a href='../index.html'>{html.escape(up)}</a></p>"
        + "</main></body></html>"
    )
