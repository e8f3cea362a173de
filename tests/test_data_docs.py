"""Data Docs rendered by the views whose Jinja templates compile once are the same pages."""

import re
from pathlib import Path

import pandas as pd
import yaml
from great_expectations.render.view import DefaultJinjaIndexPageView, DefaultJinjaPageView

from dagster_project.quality import data_docs_views
from dagster_project.quality.suites import Rule, Suite
from dagster_project.quality.validation import DATA_DOCS_SITE, validate

SUITE = Suite(
    "data_docs_probe",
    "a probe of the Data Docs",
    "row_id",
    (
        Rule("2.3(q)", "ExpectColumnValuesToBeBetween", "amount", {"column": "amount",
             "min_value": 0, "max_value": 10}, "amount between 0 and 10"),
    ),
)  # fmt: skip
# what differs from one build to the next: times, run names, ids
VARYING = re.compile(
    r"\d{8}T\d{6}(\.\d+)?Z?|\d{4}-\d{2}-\d{2}[T ][\d:.+]+( UTC)?|_run_time_sort': [\d.]+|"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def _pages(root) -> dict[str, str]:
    site = root / "gx" / "uncommitted" / "data_docs" / "local_site"
    return {
        VARYING.sub("", str(page.relative_to(site))): VARYING.sub("", page.read_text())
        for page in sorted(site.rglob("*.html"))
    }


def test_the_views_that_compile_once_render_the_same_pages(tmp_path, monkeypatch):
    frame = pd.DataFrame({"row_id": ["a", "b", "c"], "amount": [1, 5, 11]})
    cached = validate(frame, SUITE, tmp_path / "cached")
    with monkeypatch.context() as patched:
        patched.setattr(data_docs_views, "BYTECODE", None)  # Jinja compiles every build
        plain = validate(frame, SUITE, tmp_path / "plain")
    assert [(o.success, o.offenders) for o in cached] == [(False, (("c", "11"),))]
    assert [(o.success, o.offenders) for o in plain] == [(False, (("c", "11"),))]
    pages = _pages(tmp_path / "cached")
    assert len(pages) == 3  # the index, the suite's expectations, its validation
    assert pages == _pages(tmp_path / "plain")
    cache = data_docs_views.BYTECODE
    assert list(Path(cache.directory).glob(cache.pattern % "*"))  # compiled templates kept


def test_the_site_configuration_names_the_views_and_is_written_once(tmp_path, monkeypatch):
    frame = pd.DataFrame({"row_id": ["a"], "amount": [1]})
    validate(frame, SUITE, tmp_path)
    config_file = tmp_path / "gx" / "great_expectations.yml"
    site = yaml.safe_load(config_file.read_text())["data_docs_sites"]["local_site"]
    assert site == DATA_DOCS_SITE
    index_view = site["site_index_builder"]["view"]
    assert issubclass(getattr(data_docs_views, index_view["class_name"]), DefaultJinjaIndexPageView)
    for section in site["site_section_builders"].values():
        assert issubclass(
            getattr(data_docs_views, section["view"]["class_name"]), DefaultJinjaPageView
        )
    from great_expectations.data_context import AbstractDataContext

    updates = []
    monkeypatch.setattr(AbstractDataContext, "update_data_docs_site", lambda *a: updates.append(a))
    validate(frame, SUITE, tmp_path)
    assert updates == []  # the site is as configured: not rewritten


def test_without_a_private_temporary_folder_the_templates_compile_every_build(monkeypatch):
    def unsafe(**_kwargs):
        raise RuntimeError("Cannot determine safe temp directory.")

    monkeypatch.setattr(data_docs_views, "FileSystemBytecodeCache", unsafe)
    assert data_docs_views._bytecode_cache() is None  # the views then compile as Jinja does
