"""Helpers of the scenarios on the small deal's first year (the fixture `inputs` of conftest)."""

import csv
from pathlib import Path

from conftest import FIRST_YEAR as PERIODS  # noqa: F401 (the scenarios count them)
from conftest import deliveries
from pipeline_process import query


def delivered(inputs: Path) -> list[str]:
    return sorted(p.name for p in deliveries(inputs).iterdir())


def assert_consistent(folder: Path, inputs: Path) -> None:
    """Every delivered period loaded once and whole; the gate lets every certificate out."""
    published = folder / "warehouse.duckdb"
    for period in delivered(inputs):
        with (deliveries(inputs) / period / "loan_status.csv").open() as handle:
            expected = sum(1 for _ in csv.DictReader(handle))
        rows = query(
            published,
            'select count(*), count(distinct "assetNumber") from raw.loan_status '
            "where collection_period = ?",
            [period],
        )
        assert rows == [(expected, expected)], period
    loaded = query(
        published,
        "select deal_id, scope, file_kind, count(*) from raw.deliveries where status = 'loaded' "
        "group by all having count(*) <> 1",
    )
    assert loaded == []
    assert query(published, "select count(*) from quality.certificate_gate") == [
        (len(delivered(inputs)),)
    ]
    assert query(published, "select bool_and(is_publishable) from quality.certificate_gate") == [
        (True,)
    ]
