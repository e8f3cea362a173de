"""Dagster resources: where the warehouse and the inputs are (config with local defaults)."""

from pathlib import Path

import dagster as dg

from dagster_project import warehouse
from dagster_project.deal import Deal, load_deal


class WarehouseResource(dg.ConfigurableResource):
    """The working DuckDB file, the published copy and the input folders."""

    work_path: str = str(warehouse.work_path())
    published_path: str = str(warehouse.published_path())
    input_dir: str = str(warehouse.input_dir())
    deal_file: str = ""

    def deal(self) -> Deal:
        return load_deal(self.deal_file or None)

    @property
    def deliveries_dir(self) -> Path:
        return Path(self.input_dir) / "deliveries"

    def connect(self, read_only: bool = False):
        warehouse.restore_work(Path(self.work_path), Path(self.published_path))
        return warehouse.connect(Path(self.work_path), read_only=read_only)
