"""The deal performance report: the plots a trustee or investor reads at a glance."""

import html
from decimal import Decimal
from pathlib import Path

import pandas

from dagster_project.reports.analytics import analytics_html
from dagster_project.reports.charts import STYLES, Line, line_chart
from dagster_project.reports.provenance import provenance_html

PLOTS = (
    ("paydown", "Pool Balance and Note Balances by class"),
    ("factors", "Note Pool Factors"),
    ("delinquency", "Delinquency as a share of the Pool Balance"),
    ("losses", "Cumulative net loss (percent of the Initial Pool Balance)"),
    ("prepayment", "Prepayment speed: monthly ABS and CPR"),
    ("excess_spread", "Excess spread (annualized, percent of the Pool Balance)"),
    ("credit_enhancement", "Reserve Account and overcollateralization against their targets"),
)


# The rate plots (delinquency, prepayment, excess spread) show the deal's life: the months where
# the Pool Balance is at least this share of the Initial Pool Balance. In the tail a handful of
# receivables move the rates to extremes (a CPR near 100%) and would flatten the years before.
TAIL_SHARE = Decimal("0.05")

# Each plot's data table under it: (column, heading, kind) from the exact query result.
TABLES = {
    "paydown": (("ending_pool_balance", "Pool Balance", "money"),),
    "delinquency": (
        ("delinquent_31_60_balance", "31-60 days", "money"),
        ("delinquent_61_90_balance", "61-90 days", "money"),
        ("delinquent_91_plus_balance", "91+ days", "money"),
        ("ending_pool_balance", "Pool Balance", "money"),
    ),
    "losses": (("cumulative_net_loss_percent", "cumulative net loss %", "percent"),),
    "prepayment": (
        ("abs_speed", "ABS %", "percent"),
        ("cpr", "CPR %", "percent"),
    ),
    "excess_spread": (
        ("excess_spread", "excess spread $", "money"),
        ("beginning_pool_balance", "beginning Pool Balance", "money"),
        ("excess_spread_percent", "annualized %", "percent"),
    ),
    "credit_enhancement": (
        ("reserve_balance", "Reserve Account", "money"),
        ("required_reserve", "Required Reserve Account Amount", "money"),
        ("overcollateralization", "overcollateralization", "money"),
        ("overcollateralization_target", "Overcollateralization Target Amount", "money"),
    ),
}


def draw(key: str, pool, notes) -> str:
    """One plot of the report as inline SVG (reports/charts.py). pool: one row per Distribution
    Date (floats, for drawing only); notes: per date and class."""
    return _PLOTTERS[key](pool, notes, alt=dict(PLOTS)[key], x_label="Distribution Date")


def _life(pool):
    """The Distribution Dates of the deal's life (TAIL_SHARE)."""
    return pool[pool["beginning_pool_balance"] >= float(TAIL_SHARE) * pool["initial_pool_balance"]]


def _class_order(notes) -> list[str]:
    return list(dict.fromkeys(notes.sort_values("class_order")["class_id"]))


def _dates(pool) -> list:
    return list(pool["distribution_date"].dt.date)


def _paydown(pool, notes, **labels) -> str:
    wide = notes.pivot(index="distribution_date", columns="class_id", values="ending_balance")
    dates = [date.date() for date in wide.index]
    areas = [Line(c, dates, list(wide[c] / 1e6)) for c in _class_order(notes)]
    balance = Line("Pool Balance", _dates(pool), list(pool["ending_pool_balance"] / 1e6),
                   colour="#000")  # fmt: skip
    return line_chart([balance], areas=areas, y_label="$ millions", y_floor=0, **labels)


def _factors(pool, notes, **labels) -> str:
    factors = notes.pivot(index="distribution_date", columns="class_id", values="pool_factor")
    dates = [date.date() for date in factors.index]
    # classes paid pro rata (A-2a and A-2b) share a line: their styles tell them apart
    lines = [
        Line(c, dates, list(factors[c]), style=STYLES[number % len(STYLES)])
        for number, c in enumerate(_class_order(notes))
    ]
    return line_chart(lines, y_label="Note Pool Factor", y_floor=0, y_ceiling=1.05, **labels)


def _delinquency(pool, notes, **labels) -> str:
    pool = _life(pool)
    balance = pool["ending_pool_balance"].where(pool["ending_pool_balance"] > 0)
    lines = [
        Line(f"{label} days", _dates(pool), list(pool[f"delinquent_{bucket}_balance"] / balance
                                                 * 100))
        for bucket, label in (("31_60", "31-60"), ("61_90", "61-90"), ("91_plus", "91+"))
    ]  # fmt: skip
    sixty_plus = pool["delinquent_61_90_balance"] + pool["delinquent_91_plus_balance"]
    lines.append(Line("60+ days", _dates(pool), list(sixty_plus / balance * 100), style="dash",
                      colour="#000"))  # fmt: skip
    return line_chart(lines, y_label="% of Pool Balance", **labels)


def _one_line(pool, column: str, label: str, colour: str, y_label: str, labels: dict) -> str:
    line = Line(label, _dates(pool), list(pool[column]), colour=colour)
    return line_chart([line], y_label=y_label, legend=False, **labels)


def _losses(pool, notes, **labels) -> str:
    return _one_line(pool, "cumulative_net_loss_percent", "cumulative net loss", "firebrick",
                     "% of Initial Pool Balance", labels)  # fmt: skip


def _prepayment(pool, notes, **labels) -> str:
    pool = _life(pool)
    lines = [
        Line("ABS (% per month)", _dates(pool), list(pool["abs_speed"])),
        Line("CPR (%, right axis)", _dates(pool), list(pool["cpr"]), colour="darkorange",
             right=True),
    ]  # fmt: skip
    return line_chart(lines, y_label="ABS %", right_label="CPR %", **labels)


def _excess_spread(pool, notes, **labels) -> str:
    return _one_line(_life(pool), "excess_spread_percent", "excess spread", "seagreen",
                     "% per year", labels)  # fmt: skip


def _credit_enhancement(pool, notes, **labels) -> str:
    dates = _dates(pool)
    lines = [
        Line("Reserve Account", dates, list(pool["reserve_balance"] / 1e6)),
        Line("Required Reserve Account Amount", dates, list(pool["required_reserve"] / 1e6),
             style="dash"),
        Line("Overcollateralization", dates, list(pool["overcollateralization"] / 1e6)),
        Line("Overcollateralization Target Amount", dates,
             list(pool["overcollateralization_target"] / 1e6), style="dash"),
    ]  # fmt: skip
    return line_chart(lines, y_label="$ millions", **labels)


_PLOTTERS = {
    "paydown": _paydown,
    "factors": _factors,
    "delinquency": _delinquency,
    "losses": _losses,
    "prepayment": _prepayment,
    "excess_spread": _excess_spread,
    "credit_enhancement": _credit_enhancement,
}


def _cell(value, kind: str) -> str:
    if value is None:
        return ""
    return f"${value:,.2f}" if kind == "money" else f"{value:.4f}"


def _data_table(key: str, exact) -> str:
    """The plotted figures under a plot, exact (folded: a click opens it)."""
    columns = TABLES.get(key)
    if not columns or not exact:
        return ""
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label, _ in columns)
    rows = "".join(
        f"<tr><td>{row['distribution_date']:%Y-%m-%d}</td>"
        + "".join(f"<td>{_cell(row[column], kind)}</td>" for column, _, kind in columns)
        + "</tr>"
        for row in exact
    )
    return (
        f'<details><summary>data</summary><table class="data"><tr><th>Distribution Date</th>'
        f"{head}</tr>{rows}</table></details>"
    )


def render_performance(
    trust_name: str,
    images: dict[str, str],
    summary: list[tuple[str, str]],
    provenance: tuple[str, ...] = (),
    exact=None,
    analytics: str = "",
) -> str:
    """The report's page: `images` are the plots (inline SVG), `exact` the query's rows as
    DECIMALs (the data tables), `analytics` the investor views' sections (reports/analytics.py)."""
    facts = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in summary
    )
    sections = "".join(
        f"<h2>{html.escape(title)}</h2>{images[key]}{_data_table(key, exact)}"
        for key, title in PLOTS
        if key in images
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(trust_name)}: deal performance</title>"
        "<style>body{font-family:Helvetica,Arial,sans-serif;max-width:60em;margin:2em auto;}"
        "td{padding:2px 12px 2px 0;} h2{font-size:1.05em;margin-top:1.6em;}"
        "table.data{font-size:0.8em;border-collapse:collapse;} table.data td{text-align:right;}"
        "table.data th{padding:2px 8px;text-align:right;vertical-align:bottom;}"
        "p.caption{font-size:0.85em;color:#555;} td.num{text-align:right;}"
        "</style></head><body>"
        f"<h1>{html.escape(trust_name)}: deal performance</h1><table>{facts}</table>"
        f'<p class="caption">Delinquency, prepayment and excess spread are plotted while the Pool '
        f"Balance is at least {TAIL_SHARE:.0%} of the Initial Pool Balance (the tail's handful of "
        "receivables moves rates to extremes); every month is in the data tables.</p>"
        f"{sections}{analytics}" + provenance_html(provenance) + "</body></html>"
    )


PERFORMANCE_SQL = """
select
    dates.distribution_date,
    dates.ending_pool_balance,
    dates.beginning_pool_balance,
    dates.delinquent_31_60_balance,
    dates.delinquent_61_90_balance,
    dates.delinquent_91_plus_balance,
    dates.cumulative_net_loss_percent,
    -- the market's excess spread, and annualised over the beginning Pool Balance
    age.excess_spread_amount as excess_spread,
    age.excess_spread_annualized_percent as excess_spread_percent,
    dates.reserve_account_ending_balance as reserve_balance,
    dates.required_reserve_account_amount as required_reserve,
    dates.overcollateralization_amount as overcollateralization,
    dates.overcollateralization_target_amount as overcollateralization_target,
    -- from scheduled versus prepaid principal (int_collection_period__prepayments)
    pool.initial_pool_balance,
    pool.abs_speed_percent as abs_speed,
    pool.conditional_prepayment_rate_percent as cpr
from marts.fct_distribution_date as dates
inner join marts.fct_pool_period as pool
    on dates.deal_id = pool.deal_id and dates.period_number = pool.period_number
inner join marts.rpt_shelf_performance_by_age as age
    on dates.deal_id = age.deal_id and dates.collection_period = age.collection_period
where dates.deal_id = $deal_id
order by dates.distribution_date
"""


def write_performance(
    con, deal_id: str, trust_name: str, path: Path, provenance: tuple[str, ...] = ()
) -> None:
    result = con.execute(PERFORMANCE_SQL, {"deal_id": deal_id})
    names = [column[0] for column in result.description]
    exact = [dict(zip(names, row, strict=True)) for row in result.fetchall()]  # DECIMALs
    pool = pandas.DataFrame(exact, columns=names)
    pool["distribution_date"] = pandas.to_datetime(pool["distribution_date"])
    path.parent.mkdir(parents=True, exist_ok=True)
    if pool.empty:  # no Collection Period computed yet (the first tapes missing or rejected)
        summary = [("Distribution Dates", "none computed yet: see the index for what is missing")]
        path.write_text(render_performance(trust_name, {}, summary, provenance), encoding="utf-8")
        return
    notes = con.execute(
        "select distribution_date, class_id, class_order, ending_balance::double as "
        "ending_balance, pool_factor::double as pool_factor from marts.fct_note_distribution "
        "where deal_id = ?",
        [deal_id],
    ).df()
    for column in pool.columns:
        if column != "distribution_date":
            pool[column] = pool[column].astype(float)
    images = {key: draw(key, pool, notes) for key, _title in PLOTS}
    last = exact[-1]
    summary = [
        ("Distribution Dates", str(len(pool))),
        ("Last Distribution Date", str(last["distribution_date"])[:10]),
        ("Pool Balance (last)", f"${last['ending_pool_balance']:,.2f}"),
        ("Cumulative net loss (last)", f"{last['cumulative_net_loss_percent']:.2f}%"),
    ]
    page = render_performance(
        trust_name, images, summary, provenance, exact, analytics_html(con, deal_id, TAIL_SHARE)
    )
    path.write_text(page, encoding="utf-8")
