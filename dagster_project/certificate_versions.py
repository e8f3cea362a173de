"""Published certificates are versioned, never silently overwritten.

At each publication every publishable certificate (quality.certificate_gate) is compared with the
last version recorded in history.certificate_versions: a certificate seen for the first time is
version 1; one whose lines changed (a restated delivery recomputed it) becomes the next version,
with the deliveries behind it. Nothing changes on a rerun. The history lives in the working
warehouse (dbt never rebuilds the `history` schema) and travels with every published copy.
"""

import datetime as dt
from dataclasses import dataclass

from dagster_project.warehouse import table_exists, transaction

DDL = """
create schema if not exists history;
create table if not exists history.certificate_versions (
    deal_id varchar, distribution_date date, version integer, line varchar, value varchar,
    published_at timestamptz, deliveries varchar
);
"""


@dataclass(frozen=True)
class Version:
    deal_id: str
    distribution_date: dt.date
    version: int
    published_at: dt.datetime
    deliveries: str
    values: dict  # line -> printed value (exact text)


def record_versions(con, published_at: dt.datetime) -> list[tuple[str, dt.date, int]]:
    """Record a new version of every publishable certificate that changed; return them."""
    con.execute(DDL)
    changed = con.execute(
        """
        with current_lines as (
            select certificate.deal_id, certificate.distribution_date, certificate.line,
                certificate.value
            from marts.rpt_servicer_certificate as certificate
            inner join quality.certificate_gate as gate
                on certificate.deal_id = gate.deal_id
                and certificate.distribution_date = gate.distribution_date
            where gate.is_publishable
        ),
        current_dates as (select distinct deal_id, distribution_date from current_lines),
        latest as (
            select deal_id, distribution_date, max(version) as version
            from history.certificate_versions group by deal_id, distribution_date
        ),
        latest_lines as (
            select history.deal_id, history.distribution_date, history.line, history.value
            from history.certificate_versions as history
            inner join latest using (deal_id, distribution_date, version)
            inner join current_dates using (deal_id, distribution_date)
        ),
        differences as (
            select deal_id, distribution_date from (
                (select * from current_lines except select * from latest_lines)
                union all
                (select * from latest_lines except select * from current_lines)
            )
            group by deal_id, distribution_date
        )
        select differences.deal_id, differences.distribution_date,
            coalesce(latest.version, 0) + 1
        from differences left join latest using (deal_id, distribution_date)
        order by 1, 2
        """
    ).fetchall()
    if changed:
        with transaction(con):
            for deal_id, date, version in changed:
                con.execute(
                    """
                    insert into history.certificate_versions
                    select certificate.deal_id, certificate.distribution_date, ?,
                        certificate.line, certificate.value, ?, (
                            select string_agg(delivery_id, ', ' order by delivery_id)
                            from raw.deliveries
                            where status = 'loaded' and deal_id = ?
                                and file_kind in ('loan_status', 'payment_transactions')
                                and scope <= (
                                    select collection_period
                                    from staging.stg_deal__payment_calendar
                                    where deal_id = ? and distribution_date = ?)
                        )
                    from marts.rpt_servicer_certificate as certificate
                    where certificate.deal_id = ? and certificate.distribution_date = ?
                    """,
                    [version, published_at, deal_id, deal_id, date, deal_id, date],
                )
    return changed


def load_versions(con) -> dict[tuple[str, dt.date], list[Version]]:
    """Every recorded version, oldest first, per trust and Distribution Date (read-only)."""
    if not table_exists(con, "history", "certificate_versions"):
        return {}
    rows = con.execute(
        "select deal_id, distribution_date, version, published_at, any_value(deliveries), "
        "map_from_entries(list(struct_pack(k := line, v := value))) "
        "from history.certificate_versions group by 1, 2, 3, 4 order by 1, 2, 3"
    ).fetchall()
    out: dict[tuple[str, dt.date], list[Version]] = {}
    for deal_id, date, version, published_at, deliveries, values in rows:
        out.setdefault((deal_id, date), []).append(
            Version(deal_id, date, version, published_at, deliveries or "", dict(values))
        )
    return out


def changes(older: Version, newer: Version) -> list[tuple[str, str | None, str | None]]:
    """(line, old value, new value) for every line that differs, in line order."""
    lines = sorted(set(older.values) | set(newer.values), key=_line_order)
    return [
        (line, older.values.get(line), newer.values.get(line))
        for line in lines
        if older.values.get(line) != newer.values.get(line)
    ]


def _line_order(line: str):
    number, _, rest = line.partition("_")
    digits = "".join(c for c in number if c.isdigit())
    return int(digits or 0), number, rest
