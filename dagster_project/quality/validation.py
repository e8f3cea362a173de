"""Run a suite on a frame with Great Expectations and keep what auditors and the register need.

The Great Expectations project lives in expectations/ (CAOT_GX_DIR overrides it): a file context
whose suites, validation definitions and checkpoints are written from the code on each run; its
Data Docs (HTML, expectations/gx/uncommitted/data_docs/) are built once after a run's suites
(build_data_docs), styled by expectations/data_docs.css (installed as the project's custom Data
Docs stylesheet) so that they read offline. Each validation is named after the build that ran it
(`run_name`); each expectation's notes name the clause it tests. Each suite keeps its last
KEPT_RUNS validation results (and their Data Docs pages); the register in the warehouse
(quality.*) keeps every outcome.
"""

import contextlib
import math
import os
import shutil
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from dagster_project.checksums import sha256
from dagster_project.deal import PROJECT_ROOT
from dagster_project.quality.suites import Rule, Suite

DATA_SOURCE = "warehouse"
OFFENDERS_KEPT = 100_000  # every offender is kept; this only bounds a runaway failure
KEPT_RUNS = 12  # a year of monthly runs per suite

if TYPE_CHECKING:  # pandas is imported where a frame is validated, not by every importer of this
    import pandas as pd  # module (the pipeline's command line imports it before its first run)


STYLESHEET = PROJECT_ROOT / "expectations" / "data_docs.css"


def gx_dir() -> Path:
    return Path(os.environ.get("CAOT_GX_DIR") or PROJECT_ROOT / "expectations")


def data_docs_index(root: Path | None = None) -> Path:
    return (root or gx_dir()) / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"


@dataclass(frozen=True)
class Outcome:
    suite: Suite
    rule: Rule
    success: bool
    element_count: int
    unexpected_count: int
    offenders: tuple[tuple[str, str], ...]  # (id of the failing row, observed value as text)


def observed_text(value, display: str) -> str:
    """An observed value as the register prints it (exact: cents and millionths are integers)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "missing"
    if display == "cents":
        return f"${Decimal(int(value)).scaleb(-2):,.2f}"
    if display == "apr":
        return f"{Decimal(int(value)).scaleb(-4):.4f}%"
    if display == "date":
        return str(value)[:10]
    return str(value.item() if hasattr(value, "item") else value)


def great_expectations():
    """Import Great Expectations with its usage analytics off (no network at run time)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    import great_expectations

    return great_expectations


def to_great_expectations(suite: Suite):
    """The Great Expectations ExpectationSuite of `suite`."""
    gx = great_expectations()

    expectations = []
    for rule in suite.rules:
        cls = getattr(gx.expectations, rule.expectation)
        meta = {
            "representation": rule.representation,
            "also": list(rule.also),
            "rule": rule.rule,
            "blocking": rule.blocking,
        }
        if rule.tolerance:
            meta["tolerance"] = rule.tolerance
        # the Data Docs show the description in place of the expectation's generic wording
        clauses = " and ".join((rule.representation, *rule.also))
        description = f"Tests {clauses}: {rule.rule}." + (
            f" Tolerance: {rule.tolerance}." if rule.tolerance else ""
        )
        expectations.append(cls(**rule.kwargs, meta=meta, description=description))
    return gx.ExpectationSuite(
        name=suite.name, expectations=expectations, meta={"subject": suite.subject}
    )


def prune_results(gx_root: Path, suite_name: str, keep: int) -> None:
    """Delete all but the `keep` newest validation results of a suite and their Data Docs pages
    (run folders are named by their UTC time, so the name orders them)."""
    # Great Expectations stores a suite named a.b under a/b/ (the name split on its dots)
    parts = suite_name.split(".")
    for folder in (
        gx_root.joinpath("uncommitted", "validations", *parts),
        gx_root.joinpath("uncommitted", "data_docs", "local_site", "validations", *parts),
    ):
        runs = sorted(folder.glob("*/*"), key=lambda run: run.name)
        for run in runs[: max(len(runs) - keep, 0)]:
            shutil.rmtree(run, ignore_errors=True)


def _context(gx, root: Path):
    context = gx.get_context(mode="file", project_root_dir=str(root))
    styles = Path(context.root_directory) / "plugins" / "custom_data_docs" / "styles"
    styles.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(STYLESHEET, styles / "data_docs_custom_styles.css")
    progress = context.variables.progress_bars
    if context.config.analytics_enabled is not False or not progress or progress.get("globally"):
        context.variables.progress_bars = {"globally": False}  # they flood logs (STACK.md)
        context.enable_analytics(False)  # also saves the project config
    return context


def build_data_docs(root: Path | None = None) -> Path:
    """Build the Data Docs (after a run's suites): the page of each stored validation result that
    has none yet (the run's own: a result never changes once stored), its suite's page, and the
    index, through Great Expectations' incremental build (`resource_identifiers`). The whole site
    when it has no index yet, or was built with another stylesheet or Great Expectations version
    (every page carries the stylesheet)."""
    gx = great_expectations()
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,  # the type build_data_docs takes (its signature)
    )

    root = root or gx_dir()
    context = _context(gx, root)
    site = data_docs_index(root).parent
    built_with = site / ".built_with"
    fingerprint = f"{gx.__version__} {sha256(STYLESHEET)}"
    if not data_docs_index(root).exists() or not (
        built_with.exists() and built_with.read_text(encoding="utf-8") == fingerprint
    ):
        context.build_data_docs()
        built_with.write_text(fingerprint, encoding="utf-8")
        return data_docs_index(root)
    # a result's page: validations/<its identifier's parts>.html (as prune_results finds them)
    new = [
        key
        for key in context.validation_results_store.list_keys()
        if not site.joinpath(
            "validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html"
        ).exists()
    ]
    suites = {key.expectation_suite_identifier.name for key in new}
    identifiers = [*new, *(ExpectationSuiteIdentifier(name=name) for name in sorted(suites))]
    if identifiers:  # (none would rebuild every page)
        context.build_data_docs(resource_identifiers=identifiers)
    return data_docs_index(root)


def comparable(frame: "pd.DataFrame") -> "pd.DataFrame":
    """`frame` with its integer columns as int64 and its datetime columns in nanoseconds, where
    the values allow: Great Expectations compares int64, float64 and datetime64[ns] columns with
    numpy, and any other dtype (DuckDB's INTEGER gives int32, its DATE datetime64[us]) one value
    at a time in Python (0.4 s for the schedule's 63,500 rows). The values do not change."""
    import numpy as np
    import pandas as pd

    out = frame.copy(deep=False)
    for name, dtype in frame.dtypes.items():
        if not isinstance(dtype, np.dtype):  # pandas' nullable types (a column with NULLs)
            continue
        if dtype.kind in "iu" and dtype != np.int64:
            out[name] = frame[name].astype(np.int64)
        elif dtype.kind == "M" and dtype != np.dtype("datetime64[ns]"):
            with contextlib.suppress(pd.errors.OutOfBoundsDatetime):  # beyond 2262: one by one
                out[name] = frame[name].astype("datetime64[ns]")
    return out


def validate(
    frame, suite: Suite, root: Path | None = None, run_name: str = "unnamed-build"
) -> list[Outcome]:
    """Validate `frame` against `suite` and store the result under `run_name` (the build that
    ran it; build_data_docs renders it)."""
    frame = comparable(frame)
    gx = great_expectations()
    context = _context(gx, root or gx_dir())
    source = context.data_sources.add_or_update_pandas(DATA_SOURCE)
    names = {asset.name for asset in source.assets}
    asset = (
        source.get_asset(suite.name)
        if suite.name in names
        else source.add_dataframe_asset(suite.name)
    )
    batch = (
        asset.batch_definitions[0]
        if asset.batch_definitions
        else asset.add_batch_definition_whole_dataframe("whole")
    )
    expectation_suite = to_great_expectations(suite)
    for index, expectation in enumerate(expectation_suite.expectations):
        expectation.meta["rule_index"] = index
    expectation_suite = context.suites.add_or_update(expectation_suite)
    definition = context.validation_definitions.add_or_update(
        gx.ValidationDefinition(name=suite.name, data=batch, suite=expectation_suite)
    )
    checkpoint = context.checkpoints.add_or_update(
        gx.Checkpoint(
            name=suite.name,
            validation_definitions=[definition],
            actions=[],
            result_format={
                "result_format": "COMPLETE",
                "unexpected_index_column_names": [suite.id_column],
            },
        )
    )
    prune_results(Path(context.root_directory), suite.name, KEPT_RUNS - 1)
    result = checkpoint.run(
        batch_parameters={"dataframe": frame}, run_id=gx.RunIdentifier(run_name=run_name)
    )
    outcomes = []
    for validation in result.run_results.values():
        for item in validation.results:
            rule = suite.rules[int(item.expectation_config.meta["rule_index"])]
            if item.exception_info and item.exception_info.get("raised_exception"):
                raise RuntimeError(
                    f"suite {suite.name}, expectation {rule.name} could not run: "
                    f"{item.exception_info.get('exception_message')}"
                )
            detail = item.result or {}
            offenders = tuple(
                (str(row.get(suite.id_column)), observed_text(row.get(rule.column), rule.display))
                for row in (detail.get("unexpected_index_list") or [])[:OFFENDERS_KEPT]
            )
            outcomes.append(
                Outcome(
                    suite=suite,
                    rule=rule,
                    success=bool(item.success),
                    element_count=int(detail.get("element_count") or len(frame)),
                    unexpected_count=int(detail.get("unexpected_count") or 0),
                    offenders=offenders,
                )
            )
    return sorted(outcomes, key=lambda o: suite.rules.index(o.rule))
