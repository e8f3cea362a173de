"""Data Docs: the suites store their results; one build renders every stored result."""

import re

import pandas as pd

from dagster_project.quality.suites import Rule, Suite
from dagster_project.quality.validation import KEPT_RUNS, build_data_docs, validate

SUITE = Suite(
    "data_docs_probe",
    "a probe of the Data Docs",
    "row_id",
    (
        Rule("2.3(q)", "ExpectColumnValuesToBeBetween", "amount", {"column": "amount",
             "min_value": 0, "max_value": 10}, "amount between 0 and 10"),
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
    assert "values must be greater than or equal to" in validation_page


def test_each_suite_keeps_its_last_runs(tmp_path):
    frame = pd.DataFrame({"row_id": ["a"], "amount": [1]})
    for _ in range(KEPT_RUNS + 2):
        validate(frame, SUITE, tmp_path)
    stored = tmp_path / "gx" / "uncommitted" / "validations" / SUITE.name
    assert len(list(stored.glob("*/*"))) == KEPT_RUNS
