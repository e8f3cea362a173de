"""Data Docs: the suites store their results; one build renders every stored result."""

import re

import pandas as pd

from dagster_project.quality.suites import Rule, Suite
from dagster_project.quality.validation import KEPT_RUNS, build_data_docs, validate
from dagster_project.reports.data_docs import covers, publish_data_docs, trust_data_docs

SUITE = Suite(
    "data_docs_probe",
    "a probe of the Data Docs",
    "row_id",
    (
        Rule("2.3(q)", "ExpectColumnValuesToBeBetween", "amount", {"column": "amount",
             "min_value": 0, "max_value": 10}, "amount between 0 and 10",
             tolerance="$0.00, whole dollars"),
    ),
)  # fmt: skip


def _site(root):
    return root / "gx" / "uncommitted" / "data_docs" / "local_site"


def test_validation_stores_results_and_one_build_renders_them(tmp_path):
    frame = pd.DataFrame({"row_id": ["a", "b", "c"], "amount": [1, 5, 11]})
    outcomes = validate(frame, SUITE, tmp_path)
    assert [(o.success, o.offenders) for o in outcomes] == [(False, (("c", "11"),))]
    assert not _site(tmp_path).exists()  # validating renders nothing
    index = build_data_docs(tmp_path)
    assert index == _site(tmp_path) / "index.html"
    pages = sorted(p.relative_to(_site(tmp_path)).parts[0] for p in _site(tmp_path).rglob("*.html"))
    assert pages == ["expectations", "index.html", "validations"]
    validation_page = next((_site(tmp_path) / "validations").rglob("*.html")).read_text()
    assert re.search(r"Status:</span>\s*<i class=\"[^\"]*text-danger", validation_page)  # failed
    # each expectation says which clause it tests, in its own words; the failing row is listed
    assert "Tests 2.3(q): amount between 0 and 10. Tolerance: $0.00, whole dollars." in (
        validation_page
    )
    assert re.search(
        r'scrollbars">11</div></td><td[^>]*><div class="show-scrollbars">1</div>'
        r'</td><td[^>]*><div class="show-scrollbars">c</div>',
        validation_page,
    )


def test_a_build_renders_the_new_results_and_keeps_the_pages_built_before(tmp_path):
    """After the first build, a build renders the pages of the results stored since (and their
    suite's page and the index); the pages of earlier results stay as they were built, and a
    result whose page went missing gets it again."""
    frame = pd.DataFrame({"row_id": ["a", "b"], "amount": [1, 11]})
    validate(frame, SUITE, tmp_path, run_name="run-first")
    build_data_docs(tmp_path)
    first = next((_site(tmp_path) / "validations").rglob("run-first/*/*.html"))
    first.write_text("built before")  # a page is not rendered again
    validate(frame.head(1), SUITE, tmp_path, run_name="run-second")
    index = build_data_docs(tmp_path).read_text()
    second = next((_site(tmp_path) / "validations").rglob("run-second/*/*.html"))
    assert first.read_text() == "built before"
    assert "Tests 2.3(q)" in second.read_text()
    assert "run-first" in index and "run-second" in index
    second.unlink()
    build_data_docs(tmp_path)
    assert second.exists() and first.read_text() == "built before"
    # a site built with another stylesheet or Great Expectations version is built again whole
    (_site(tmp_path) / ".built_with").write_text("another version", encoding="utf-8")
    build_data_docs(tmp_path)
    assert "Tests 2.3(q)" in first.read_text()


def test_each_suite_keeps_its_last_runs(tmp_path):
    frame = pd.DataFrame({"row_id": ["a"], "amount": [1]})
    for _ in range(KEPT_RUNS + 2):
        validate(frame, SUITE, tmp_path)
    stored = tmp_path / "gx" / "uncommitted" / "validations" / SUITE.name
    assert len(list(stored.glob("*/*"))) == KEPT_RUNS


def test_the_publication_keeps_the_newest_validation_of_each_suite_readable_offline(tmp_path):
    frame = pd.DataFrame({"row_id": ["a", "b"], "amount": [1, 11]})
    validate(frame, SUITE, tmp_path, run_name="run-earlier")
    validate(frame.head(1), SUITE, tmp_path, run_name="run-published")
    published = publish_data_docs(build_data_docs(tmp_path), tmp_path / "reports" / "data_docs")
    validate(frame, SUITE, tmp_path, run_name="run-after-publication")
    build_data_docs(tmp_path)

    index = published.read_text()
    assert "<script" not in index and "http" not in index  # plain HTML, nothing to fetch
    assert "<a href='../index.html'>All trusts</a>" in index  # the shelf's index above it
    assert "run-published" in index and "passed" in index
    assert "run-earlier" not in index and "run-after-publication" not in index
    pages = [p.relative_to(published.parent).as_posix() for p in published.parent.rglob("*.html")]
    validations = [p for p in pages if p.startswith("validations/")]
    assert len(validations) == 1 and "/run-published/" in validations[0]
    assert "expectations/data_docs_probe.html" in pages
    for page in (validations[0], "expectations/data_docs_probe.html"):
        text = (published.parent / page).read_text()
        # the offline stylesheet is inlined and the expectation names the clause it tests
        assert ".fa-check-circle::before" in text, page
        assert "Tests 2.3(q): amount between 0 and 10." in text, page
    for link in re.findall(r'href="([^"#]+)"', index):
        assert (published.parent / link).exists() or link == "../index.html", link


def test_a_trust_s_dotted_suite_name_is_kept_pruned_and_published(tmp_path):
    """Great Expectations stores a suite named `trust.suite` under trust/suite/: pruning and the
    publication find it there (each trust's schedule suites are named so)."""
    suite = Suite("caot-x.schedule_probe", "a trust's probe", "row_id", SUITE.rules)
    frame = pd.DataFrame({"row_id": ["a"], "amount": [1]})
    for run in range(KEPT_RUNS + 1):
        validate(frame, suite, tmp_path, run_name=f"run-{run}")
    stored = tmp_path / "gx" / "uncommitted" / "validations" / "caot-x" / "schedule_probe"
    assert len(list(stored.glob("*/*"))) == KEPT_RUNS
    validate(frame, SUITE, tmp_path, run_name="run-other")
    published = publish_data_docs(build_data_docs(tmp_path), tmp_path / "published")
    index = published.read_text()
    assert "caot-x.schedule_probe" in index and f"run-{KEPT_RUNS}" in index
    assert "data_docs_probe" in index
    for link in re.findall(r'href="([^"#]+)"', index):
        assert (published.parent / link).exists() or link == "../index.html", link


def test_a_trust_s_part_of_the_published_evidence_has_its_suites_and_the_shelf_s_only(tmp_path):
    """The auditor's package of a trust gets the published validations of its own suites and of
    the shelf's (the servicing criteria), with an index listing those only; another trust's
    schedule validations stay out. Shared files are the published ones (hard links)."""
    frame = pd.DataFrame({"row_id": ["a", "b"], "amount": [1, 11]})
    for name in ("caot-x.schedule_probe", "caot-y.schedule_probe"):
        validate(frame, Suite(name, "a trust's probe", "row_id", SUITE.rules), tmp_path)
    validate(frame, SUITE, tmp_path, run_name="run-shelf")
    published = publish_data_docs(build_data_docs(tmp_path), tmp_path / "published").parent
    out = tmp_path / "package" / "data_docs"
    trust_data_docs(published, out, "caot-x", share=True)
    pages = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))
    assert "expectations/caot-x/schedule_probe.html" in pages
    assert "expectations/data_docs_probe.html" in pages
    assert not [p for p in pages if "caot-y" in p], pages
    assert len([p for p in pages if p.startswith("validations/")]) == 2
    index = (out / "index.html").read_text()
    assert "caot-x.schedule_probe" in index and "data_docs_probe" in index
    # the folder above is the package (its summary), not the shelf
    assert "<a href='../index.html'>The auditor&#x27;s package</a>" in index
    assert "caot-y" not in index
    for link in re.findall(r'href="([^"#]+)"', index):
        assert (out / link).exists() or link == "../index.html", link
    page = next(out.rglob("validations/caot-x/**/*.html"))
    assert page.stat().st_ino == (published / page.relative_to(out)).stat().st_ino
    # a trust whose id begins another's (caot-x.1) keeps its own suites
    assert covers("caot-x.1.schedule_probe", "caot-x.1")
    assert not covers("caot-x.1.schedule_probe", "caot-x")
