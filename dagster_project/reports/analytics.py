"""The investor analytics of the deal performance report: the transition matrix of the last
computed Collection Period, loss curves by origination quarter, recoveries by default cohort and
the credit-score stratification at the cutoff and now (marts.rpt_roll_rates, rpt_vintage_curves,
rpt_recoveries, rpt_stratification; docs/analyst_guide.md queries each)."""

import html
from decimal import Decimal

from dagster_project.reports.charts import Line, line_chart
from dagster_project.reports.document import display

STATES = ("current", "1-30", "31-60", "61-90", "91-120")
TO_STATES = (*STATES, "defaulted", "repurchased", "paid to maturity", "prepaid")


def _table(head: list[str], rows: list[list[str]], numeric_from: int = 1) -> str:
    cells = "".join(
        "<tr>"
        + "".join(
            f"<td{' class=num' if n >= numeric_from else ''}>{html.escape(c)}</td>"
            for n, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    heading = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    return f'<table class="data"><tr>{heading}</tr>{cells}</table>'


def _transition_matrix(con, deal_id: str, tail_share: Decimal) -> str:
    # the latest period of the deal's life (`tail_share`: in the tail a handful of receivables
    # make every row 0 or 100)
    last = con.execute(
        "select max(rates.period_number), arg_max(rates.collection_period, rates.period_number) "
        "from marts.rpt_roll_rates as rates inner join marts.fct_pool_period as pool "
        "on rates.deal_id = pool.deal_id and rates.period_number = pool.period_number "
        "where rates.deal_id = ? and pool.beginning_pool_balance >= ? * pool.initial_pool_balance",
        [deal_id, tail_share],
    ).fetchone()
    if last[0] is None:
        return ""
    shares = {
        (f, t): s
        for f, t, s in con.execute(
            "select from_state, to_state, balance_share_percent from marts.rpt_roll_rates "
            "where deal_id = ? and period_number = ?",
            [deal_id, last[0]],
        ).fetchall()
    }
    rows = [
        [state]
        + [f"{shares[(state, to)]:.2f}" if (state, to) in shares else "" for to in TO_STATES]
        for state in STATES
        if any(key[0] == state for key in shares)
    ]
    return (
        f"<h2>Roll rates, Collection Period {html.escape(last[1])}</h2>"
        '<p class="caption">Where the balance of each state at the end of the period before went, '
        "percent of that state's balance (rows sum to 100): the latest period whose beginning Pool "
        f"Balance is at least {tail_share:.0%} of the Initial Pool Balance; every period is in "
        "marts.rpt_roll_rates.</p>" + _table(["from \\ to", *TO_STATES], rows)
    )


def _vintage_plot(con, deal_id: str) -> str:
    curves = con.execute(
        "select origination_quarter, months_since_cutoff, cumulative_net_loss_percent "
        "from marts.rpt_vintage_curves where deal_id = ? order by 1, 2",
        [deal_id],
    ).fetchall()
    if not curves:
        return ""
    lines = [
        Line(
            f"{quarter:%Y} Q{(quarter.month - 1) // 3 + 1}",
            [m for q, m, _v in curves if q == quarter],
            [float(v) for q, m, v in curves if q == quarter],  # drawing only
            width=1,
        )
        for quarter in sorted({q for q, _m, _v in curves})
    ]
    chart = line_chart(
        lines,
        alt="vintage curves",
        x_label="months since the Cutoff Date",
        y_label="cumulative net loss, % of cutoff balance",
        legend=len(lines) <= 12,
    )
    return "<h2>Cumulative net loss by origination quarter</h2>" + chart


def _recoveries(con, deal_id: str) -> str:
    rows = con.execute(
        "select default_collection_period, defaulted_receivable_count, "
        "defaulted_principal_amount, liquidation_proceeds_amount, recovery_rate_percent, "
        "weighted_recovery_lag_months from marts.rpt_recoveries where deal_id = ? "
        "order by default_period_number",
        [deal_id],
    ).fetchall()
    if not rows:
        return ""
    body = [
        [period, str(count), display(str(defaulted), "money"), display(str(proceeds), "money"),
         f"{rate:.2f}", f"{lag:.1f}"]
        for period, count, defaulted, proceeds, rate, lag in rows
    ]  # fmt: skip
    return (
        "<h2>Recoveries by Collection Period of default</h2><details><summary>"
        f"{len(rows)} default cohorts</summary>"
        + _table(
            [
                "defaulted in",
                "receivables",
                "defaulted principal",
                "Liquidation Proceeds",
                "recovery %",
                "lag (months)",
            ],
            body,
        )  # fmt: skip
        + "</details>"
    )


def _stratification(con, deal_id: str) -> str:
    """The pool by credit score at the cutoff and at the last period with receivables outstanding
    (the one-row-per-period pool table says which: the loan-level table is not scanned)."""
    rows = con.execute(
        "select period_number, collection_period, bucket, receivable_count, principal_balance, "
        "balance_share_percent, weighted_average_apr_percent from marts.rpt_stratification "
        "where deal_id = ? and dimension = 'credit score' and period_number in (0, (select "
        "max(period_number) from marts.fct_pool_period where deal_id = ? "
        "and receivables_outstanding > 0)) "
        "order by period_number, bucket",
        [deal_id, deal_id],
    ).fetchall()
    if not rows:
        return ""
    body = [
        [period, bucket, str(count), display(str(balance), "money"), f"{share:.2f}",
         f"{apr:.2f}"]
        for _n, period, bucket, count, balance, share, apr in rows
    ]  # fmt: skip
    return (
        "<h2>Pool by credit score, at the cutoff and now</h2>"
        + _table(
            ["period", "credit score", "receivables", "Principal Balance", "share %", "WAC %"],
            body,
            numeric_from=2,
        )  # fmt: skip
    )


def analytics_html(con, deal_id: str, tail_share: Decimal) -> str:
    """The sections; `tail_share`: the share of the Initial Pool Balance below which the deal is
    in its tail (the transition matrix shown is the last period above it)."""
    return (
        _transition_matrix(con, deal_id, tail_share)
        + _vintage_plot(con, deal_id)
        + _recoveries(con, deal_id)
        + _stratification(con, deal_id)
    )
