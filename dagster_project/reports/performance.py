"""The deal performance report: the plots a trustee or investor reads at a glance."""

import html

from dagster_project.reports.plots import new_figure, png_base64

PLOTS = (
    ("paydown", "Pool Balance and Note Balances by class"),
    ("factors", "Note Pool Factors"),
    ("delinquency", "Delinquency as a share of the Pool Balance"),
    ("losses", "Cumulative net loss (percent of the Initial Pool Balance)"),
    ("prepayment", "Prepayment speed: monthly ABS and CPR"),
    ("excess_spread", "Excess spread (annualized, percent of the Pool Balance)"),
    ("credit_enhancement", "Reserve Account and overcollateralization against their targets"),
)


def plot_all(pool, notes) -> dict[str, str]:
    """pool: one row per Distribution Date (floats, for drawing only); notes: per date and class."""
    out = {}
    dates = pool["distribution_date"]

    figure, axis = new_figure()
    wide = notes.pivot(index="distribution_date", columns="class_id", values="ending_balance")
    order = list(dict.fromkeys(notes.sort_values("class_order")["class_id"]))
    axis.stackplot(wide.index, [wide[c] / 1e6 for c in order], labels=order, alpha=0.85)
    axis.plot(dates, pool["ending_pool_balance"] / 1e6, color="black", label="Pool Balance")
    axis.set_ylabel("$ millions")
    axis.legend(ncol=5, fontsize=7)
    out["paydown"] = png_base64(figure)

    figure, axis = new_figure()
    factors = notes.pivot(index="distribution_date", columns="class_id", values="pool_factor")
    for c in order:
        axis.plot(factors.index, factors[c], label=c)
    axis.set_ylim(0, 1.05)
    axis.legend(ncol=4, fontsize=7)
    out["factors"] = png_base64(figure)

    figure, axis = new_figure()
    for bucket, label in (("31_60", "31-60"), ("61_90", "61-90"), ("91_plus", "91+")):
        share = pool[f"delinquent_{bucket}_balance"] / pool["ending_pool_balance"].where(
            pool["ending_pool_balance"] > 0
        )
        axis.plot(dates, share * 100, label=f"{label} days")
    axis.set_ylabel("% of Pool Balance")
    axis.legend(fontsize=7)
    out["delinquency"] = png_base64(figure)

    figure, axis = new_figure()
    axis.plot(dates, pool["cumulative_net_loss_percent"], color="firebrick")
    axis.set_ylabel("%")
    out["losses"] = png_base64(figure)

    figure, axis = new_figure()
    axis.plot(dates, pool["abs_speed"], label="ABS (% of original count per month)")
    axis2 = axis.twinx()
    axis2.plot(dates, pool["cpr"], color="darkorange", label="CPR (%)")
    axis.set_ylabel("ABS %")
    axis2.set_ylabel("CPR %")
    axis.legend(loc="upper left", fontsize=7)
    axis2.legend(loc="upper right", fontsize=7)
    out["prepayment"] = png_base64(figure)

    figure, axis = new_figure()
    axis.plot(dates, pool["excess_spread_percent"], color="seagreen")
    axis.set_ylabel("% per year")
    out["excess_spread"] = png_base64(figure)

    figure, axis = new_figure()
    axis.plot(dates, pool["reserve_balance"] / 1e6, label="Reserve Account")
    axis.plot(dates, pool["required_reserve"] / 1e6, "--", label="Required Reserve Account Amount")
    axis.plot(dates, pool["overcollateralization"] / 1e6, label="Overcollateralization")
    axis.plot(
        dates,
        pool["overcollateralization_target"] / 1e6,
        "--",
        label="Overcollateralization Target Amount",
    )
    axis.set_ylabel("$ millions")
    axis.legend(fontsize=7)
    out["credit_enhancement"] = png_base64(figure)
    return out


def render_performance(trust_name: str, pool, notes, summary: list[tuple[str, str]]) -> str:
    images = plot_all(pool, notes)
    facts = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in summary
    )
    sections = "".join(
        f'<h2>{html.escape(title)}</h2><img alt="{html.escape(title)}" '
        f'src="data:image/png;base64,{images[key]}">'
        for key, title in PLOTS
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(trust_name)}: deal performance</title>"
        "<style>body{font-family:Helvetica,Arial,sans-serif;max-width:60em;margin:2em auto;}"
        "img{max-width:100%;} td{padding:2px 12px 2px 0;} h2{font-size:1.05em;margin-top:1.6em;}"
        "</style></head><body>"
        f"<h1>{html.escape(trust_name)}: deal performance</h1><table>{facts}</table>{sections}"
        "</body></html>"
    )
