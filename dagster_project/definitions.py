"""Everything Dagster loads: the modules of the defs package, one per domain (ingestion,
transformation, quality, publishing, orchestration, resources)."""

from pathlib import Path

import dagster as dg


@dg.definitions
def defs() -> dg.Definitions:
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
