"""The shelf report: every trust's static-pool curves by deal age (months since its Cutoff Date),
the comparison investors read across vintages, from marts.rpt_shelf_performance_by_age."""

import html
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from dagster_project.reports.charts import STYLES, Line, line_chart
from dagster_project.reports.provenance import provenance_html

# (column of rpt_shelf_performance_by_age, title, y-axis label, plotted only while the pool is at
# least TAIL_SHARE of its initial balance: a handful of receivables moves a rate to extremes)
CURVES = (
    ("pool_factor_percent", "Pool factor", "% of the Initial Pool Balance", False),
    ("cumulative_net_loss_percent", "Cumulative net loss", "% of the Initial Pool Balance", False),
    ("cumulative_gross_loss_percent", "Cumulative gross loss (defaults)",
     "% of the Initial Pool Balance", False),
    ("delinquent_61_plus_percent", "60+ days delinquent", "% of the Pool Balance", True),
    ("abs_speed_percent", "Prepayment speed (ABS)", "% a month", True),
    ("excess_spread_annualized_percent", "Excess spread, annualized", "% of the Pool Balance",
     True),
)  # fmt: skip
TAIL_SHARE = Decimal("5")  # percent of the Initial Pool Balance

SQL = """
select deal_id, trust_name, cutoff_date, collection_period, months_since_cutoff,
    pool_factor_percent, {curves}
from marts.rpt_shelf_performance_by_age
order by cutoff_date, deal_id, months_since_cutoff
"""


def shelf_curves(con) -> dict[str, list[dict]]:
    """{deal_id: its rows by age} (exact DECIMALs), trusts in the order of their Cutoff Dates."""
    columns = ", ".join(c for c, *_ in CURVES if c != "pool_factor_percent")
    result = con.execute(SQL.format(curves=columns))
    names = [d[0] for d in result.description]
    out: dict[str, list[dict]] = {}
    for row in result.fetchall():
        record = dict(zip(names, row, strict=True))
        out.setdefault(record["deal_id"], []).append(record)
    return out


def _percent(value) -> str:
    if value is None:
        return ""
    return f"{Decimal(value).quantize(Decimal('0.01'), ROUND_HALF_UP)}"


def _plot(column: str, title: str, unit: str, tail: bool, trusts: dict[str, list[dict]]) -> str:
    lines = []
    for index, rows in enumerate(trusts.values()):
        shown = [r for r in rows if not tail or r["pool_factor_percent"] >= TAIL_SHARE]
        lines.append(Line(
            rows[0]["trust_name"],
            [r["months_since_cutoff"] for r in shown],
            [float(r[column]) for r in shown],  # drawing only; the tables print the exact value
            style=STYLES[index // 10 % len(STYLES)],  # a new style once the colours repeat
        ))  # fmt: skip
    return line_chart(lines, alt=title, x_label="months since the Cutoff Date", y_label=unit)


def _table(column: str, trusts: dict[str, list[dict]]) -> str:
    ages = sorted({r["months_since_cutoff"] for rows in trusts.values() for r in rows})
    by_age = {
        deal_id: {r["months_since_cutoff"]: r[column] for r in rows}
        for deal_id, rows in trusts.items()
    }
    head = "".join(f"<th>{html.escape(rows[0]['trust_name'])}</th>" for rows in trusts.values())
    body = "".join(
        f"<tr><td>{age}</td>"
        + "".join(f"<td>{_percent(by_age[d].get(age))}</td>" for d in trusts)
        + "</tr>"
        for age in ages
    )
    return (
        f'<details><summary>data (%)</summary><table class="data"><tr><th>month</th>{head}</tr>'
        f"{body}</table></details>"
    )


def write_shelf_report(con, path: Path, provenance: tuple[str, ...] = ()) -> int:
    """The shelf page at `path`; returns the number of trusts on it."""
    trusts = shelf_curves(con)
    sections = "".join(
        f"<h2>{html.escape(title)}</h2>"
        f"{_plot(column, title, unit, tail, trusts)}{_table(column, trusts)}"
        for column, title, unit, tail in CURVES
    ) if trusts else "<p>No Collection Period is computed yet for any trust.</p>"  # fmt: skip
    summary = "".join(
        f"<tr><td>{html.escape(rows[0]['trust_name'])}</td><td>{rows[0]['cutoff_date']}</td>"
        f"<td>{rows[-1]['months_since_cutoff']}</td><td>{_percent(rows[-1]['pool_factor_percent'])}"
        f"</td><td>{_percent(rows[-1]['cumulative_net_loss_percent'])}</td></tr>"
        for rows in trusts.values()
    )
    page = (
        '<!doctype html><html><head><meta charset="utf-8"><title>The shelf by deal age</title>'
        "<style>body{font-family:Helvetica,Arial,sans-serif;max-width:60em;margin:2em auto;}"
        "td,th{padding:2px 12px 2px 0;text-align:left;}"
        "h2{font-size:1.05em;margin-top:1.6em;}"
        "table.data{font-size:0.8em;border-collapse:collapse;}"
        "table.data td{text-align:right;} p.caption{font-size:0.85em;color:#555;}</style></head>"
        "<body><h1>The shelf by deal age</h1>"
        '<p><a href="index.html">All trusts</a></p>'
        "<table><tr><th>trust</th><th>Cutoff Date</th><th>months computed</th>"
        f"<th>pool factor %</th><th>cumulative net loss %</th></tr>{summary}</table>"
        '<p class="caption">Each trust by months since its Cutoff Date (its first Collection '
        "Period is month 1), so trusts issued years apart line up. Delinquency, prepayment and "
        f"excess spread are plotted while a pool is at least {TAIL_SHARE}% of its initial "
        "balance; the tables hold every month, rounded half up to two decimals from exact "
        "values (marts.rpt_shelf_performance_by_age).</p>"
        f"{sections}" + provenance_html(provenance) + "</body></html>"
    )
    path.write_text(page, encoding="utf-8")
    return len(trusts)
