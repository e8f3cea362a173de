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
from dataclasses import dataclass
from pathlib import Path


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
    for part in ("static", "expectations"):
        if (site / part).exists():
            shutil.copytree(site / part, out / part)
    for validation in validations:
        run = (site / validation.page).parent
        shutil.copytree(run, out / validation.page.parent, dirs_exist_ok=True)
    index = out / "index.html"
    index.write_text(_index(validations, site), encoding="utf-8")
    return index


def _index(validations: list[Validation], site: Path) -> str:
    stylesheet = (site.parents[2] / "plugins" / "custom_data_docs" / "styles").joinpath(
        "data_docs_custom_styles.css"
    )
    css = stylesheet.read_text(encoding="utf-8") if stylesheet.exists() else ""
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
        + "</tbody></table><p><a href='../index.html'>All trusts</a></p></main></body></html>"
    )
