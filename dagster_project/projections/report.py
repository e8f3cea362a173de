"""The projection report: per scenario, the assumptions, the paydown of every class (a plot and
a table: weighted average life, principal window, losses) and the pool; then the breakevens."""

import html
from pathlib import Path

from dagster_project.projections.analysis import ProjectionResult, ScenarioResult
from dagster_project.reports.charts import Line, line_chart
from dagster_project.reports.document import display

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; max-width: 62em; margin: 2em auto; color: #111; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.6em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.loss { color: #a40000; font-weight: bold; } .note { color: #444; font-size: 0.9em; }
"""


def _paydown_image(result: ScenarioResult) -> str:
    """Each class's note balance after each projected Distribution Date (display only)."""
    lines = [
        Line(
            class_id,
            [r[1] for r in result.notes if r[0] == class_id],
            [float(r[4]) / 1e6 for r in result.notes if r[0] == class_id],
        )
        for class_id in dict.fromkeys(row[0] for row in result.notes)
    ]
    return line_chart(
        lines, alt="paydown", title=f"Paydown by class: {result.scenario.name}",
        y_label="note balance ($ millions)", y_floor=0,
    )  # fmt: skip


def _assumptions(result: ScenarioResult) -> str:
    s = result.scenario
    speed = (
        f"{s.prepayment_rate * 100:.2f}% ABS" if s.prepayment == "abs"
        else f"{s.prepayment_rate * 100:.2f}% CPR"
    )  # fmt: skip
    return (
        f"{speed}; {s.cdr * 100:.2f}% CDR, severity {s.severity * 100:.0f}%, recoveries "
        f"{s.recovery_lag_months} months after default; clean-up call "
        f"{'exercised' if s.clean_up_call else 'not exercised'}"
    )


def _accounts(result: ScenarioResult) -> str:
    """The Reserve Account and the overcollateralization against its target, by date (folded)."""
    if not result.accounts:
        return ""
    rows = "".join(
        f'<tr><td>{date}</td><td class="num">{display(str(reserve), "money")}</td>'
        f'<td class="num">{display(str(oc), "money")}</td>'
        f'<td class="num">{display(str(target), "money")}</td></tr>'
        for date, reserve, oc, target in result.accounts
    )
    return (
        "<details><summary>Reserve Account and overcollateralization by Distribution Date"
        "</summary><table><tr><th>Distribution Date</th><th class=num>Reserve Account</th>"
        "<th class=num>overcollateralization</th><th class=num>target</th></tr>"
        f"{rows}</table></details>"
    )


def _scenario_section(projection: ProjectionResult, result: ScenarioResult) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(c.class_id)}</td>"
        f'<td class="num">{c.weighted_average_life if c.weighted_average_life is not None else ""}'
        f'</td><td class="num">{c.first_principal_date or ""}</td>'
        f'<td class="num">{c.last_principal_date or ""}</td>'
        f'<td class="num{" loss" if c.principal_loss else ""}">'
        f"{display(str(c.principal_loss), 'money')}</td></tr>"
        for c in result.classes
    )
    call = result.clean_up_call_date
    pool = result.pool
    return (
        f"<h2>{html.escape(result.scenario.name)}</h2>"
        f'<p class="note">{html.escape(_assumptions(result))}. Clean-up call date: '
        f"{call or 'none'}; cumulative net loss "
        f"{projection.cumulative_net_loss_percent(result)}% of the Initial Pool Balance; "
        f"{len(pool)} Collection Periods projected.</p>"
        + _paydown_image(result)
        + _accounts(result)
        + "<table><tr><th>class</th><th class=num>weighted average life (years)</th>"
        "<th class=num>first principal</th><th class=num>last principal (final payment)</th>"
        f"<th class=num>principal loss</th></tr>{rows}</table>"
    )


def _lives_table(projection: ProjectionResult) -> str:
    """Weighted average lives, a class per row and a scenario per column (the prospectus
    layout), with each scenario's clean-up call date."""
    head = "".join(
        f'<th class="num">{html.escape(r.scenario.name)}</th>' for r in projection.scenarios
    )
    rows = "".join(
        f"<tr><td>{html.escape(c.class_id)}</td>"
        + "".join(
            f'<td class="num">{r.classes[n].weighted_average_life or ""}</td>'
            for r in projection.scenarios
        )
        + "</tr>"
        for n, c in enumerate(projection.deal.classes)
    )
    calls = "".join(
        f'<td class="num">{r.clean_up_call_date or "none"}</td>' for r in projection.scenarios
    )
    return (
        "<h2>Weighted average lives (years)</h2>"
        f"<table><tr><th>class</th>{head}</tr>{rows}"
        f"<tr><td>clean-up call</td>{calls}</tr></table>"
    )


def _percent(value) -> str:
    return "" if value is None else f"{value:.3f}%"


def write_report(projection: ProjectionResult, path: Path) -> None:
    deal = projection.deal
    start = (
        f"the pool after Collection Period {projection.period}"
        if projection.period
        else "the cutoff pool (the Receivable Schedule)"
    )
    breakeven = ""
    if projection.breakevens:
        rows = "".join(
            f"<tr><td>{html.escape(b.class_id)}</td>"
            + "".join(
                f'<td class="num">{text}</td>'
                for text in (
                    _percent(b.no_loss_cdr * 100 if b.no_loss_cdr is not None else None),
                    _percent(b.loss_cdr * 100 if b.loss_cdr is not None else None),
                    _percent(b.cumulative_net_loss_percent),
                )
            )
            + "</tr>"
            for b in projection.breakevens
        )
        breakeven = (
            f"<h2>Breakeven default rates ({html.escape(projection.breakeven_scenario)})</h2>"
            '<p class="note">For each class, the default rate (CDR) bracketing the first '
            "principal loss, the scenario's other assumptions kept, and the cumulative net loss "
            "at the lower bound of the losing side. An empty cell: no loss up to a 90% CDR.</p>"
            "<table><tr><th>class</th><th class=num>no loss at CDR</th>"
            "<th class=num>principal loss from CDR</th>"
            f"<th class=num>cumulative net loss %</th></tr>{rows}</table>"
        )
    page = (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(deal.trust_name)}: projections</title><style>{STYLE}</style>"
        f"</head><body><h1>{html.escape(deal.trust_name)}: projections</h1>"
        f'<p class="note">From {start}. Every receivable is projected with its contractual '
        "payment; defaults, prepayments and recoveries follow each scenario; the projected "
        "pool runs through the certificate's own waterfall. Weighted average life: years from "
        f"{'the Closing Date' if not projection.period else 'the starting Distribution Date'} "
        "(actual days / 365) to each principal payment, weighted by it. Tables: "
        "<code>projections.duckdb</code>, schema <code>projection</code>.</p>"
        + _lives_table(projection)
        + "".join(_scenario_section(projection, r) for r in projection.scenarios)
        + breakeven
        + "</body></html>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
