"""The Dagster resource for the warehouse and the inputs: where they are (config, defaulting to the
environment at run time: CAOT_WAREHOUSE_WORK, CAOT_WAREHOUSE, CAOT_INPUT_DIR, CAOT_DEALS_DIR), the
shelf's deal files, and the run's hold on the working file."""

from contextlib import contextmanager
from pathlib import Path

import dagster as dg

from dagster_project import warehouse
from dagster_project.deal import Deal, deals_dir, load_shelf


class WarehouseResource(dg.ConfigurableResource):
    """The working DuckDB file, the published copy, the input folders and the shelf.

    For the length of a run the resource holds the working file's lock (warehouse.run_lock): runs
    from the command line, the UI and the daemon write one at a time; a second waits up to
    `wait_seconds`, then fails saying why."""

    work_path: str = ""
    published_path: str = ""
    input_dir: str = ""
    deals_dir: str = ""
    wait_seconds: float = 600.0

    @property
    def work(self) -> Path:
        return Path(self.work_path) if self.work_path else warehouse.work_path()

    @property
    def published(self) -> Path:
        return Path(self.published_path) if self.published_path else warehouse.published_path()

    @property
    def inputs(self) -> Path:
        return Path(self.input_dir) if self.input_dir else warehouse.input_dir()

    def shelf(self) -> list[Deal]:
        return load_shelf(Path(self.deals_dir) if self.deals_dir else deals_dir())

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext):
        with warehouse.run_lock(self.work, self.wait_seconds):
            warehouse.restore_work(self.work, self.published)
            yield self

    def connect(self, read_only: bool = False):
        return warehouse.connect(self.work, read_only=read_only)
