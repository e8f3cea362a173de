"""Trusts held whatever their periods, one table per cause (raw.schedule_holds: a Receivable
Schedule delivered that is not the one loaded; raw.deal_file_holds: a deal file changed and not
applied). Each table is replaced whole by the step that finds its cause; the certificate gate
reads them (quality/runs.py trust_holds)."""

from pathlib import Path

from dagster_project.warehouse import insert_rows, transaction


def replace_holds(con, table: str, holds: dict[str, tuple[Path, str]], now) -> None:
    """raw.<table> becomes `holds`: for each held trust, the file that holds it and why."""
    with transaction(con):
        con.execute(
            f"create table if not exists raw.{table} (deal_id varchar, file_path varchar, "
            "reason varchar, noted_at timestamptz)"
        )
        con.execute(f"delete from raw.{table}")
        insert_rows(
            con,
            f"raw.{table}",
            [(deal_id, str(path), why, now) for deal_id, (path, why) in holds.items()],
        )
