"""The Monthly Servicer's Certificate as an HTML page laid out like Exhibit A.

Same line numbers, labels and headings as the form; amounts right-aligned with $ and commas;
two columns where Exhibit A has them (lines 8 and 9: beginning and end of period; line 78: number
of loans and principal balance).
"""

import datetime as dt
import html
import re
from decimal import Decimal

STYLE = """
body { font-family: Georgia, 'Times New Roman', serif; margin: 2em auto; max-width: 52em;
  color: #111; }
h1, h2 { text-align: center; margin: 0.2em 0; } h1 { font-size: 1.3em; } h2 { font-size: 1.1em; }
table.head td { padding: 0 1.5em 0 0; }
table.lines { width: 100%; border-collapse: collapse; margin-top: 0.5em; }
table.lines td { padding: 1px 6px; vertical-align: top; }
td.no { width: 3.5em; } td.sub { padding-left: 2em; }
td.amt { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; width: 11em; }
tr.section td { font-weight: bold; padding-top: 1em; border-bottom: 1px solid #999; }
tr.total td { border-top: 1px solid #ccc; }
th { text-align: right; font-weight: normal; font-style: italic; }
@media print { body { margin: 0; } }
"""
TWO_COLUMN = {"_begin": "_end", "_count": "_balance"}


def display(value: str | None, kind: str) -> str:
    if value is None:
        return ""
    if kind == "money":
        return f"${Decimal(value):,.2f}"
    if kind == "count":
        return f"{int(Decimal(value)):,}"
    if kind == "factor":
        return f"{Decimal(value):.7f}"
    if kind == "percent":
        return f"{Decimal(value):.2f}%"
    if kind == "rate":
        return f"{Decimal(value):.5f}%"
    if kind == "months":
        return f"{Decimal(value):.2f} months"
    if kind == "flag":
        return {"1.0000000": "Yes", "0.0000000": "No"}.get(value, value)
    return value


def _split(line: str) -> tuple[str, str, str]:
    """'8a_begin' -> ('8', 'a', '_begin')."""
    match = re.fullmatch(r"(\d+)([a-z]?)(_[a-z]+)?", line)
    number, letter, column = match.groups()
    return number, letter, column or ""


def render_certificate(trust_name: str, period: dict, lines: list[dict]) -> str:
    """`lines`: rows of marts.rpt_servicer_certificate for one date, in line order."""
    rows: list[str] = []
    section = None
    shown_numbers: set[str] = set()
    by_line = {row["line"]: row for row in lines}
    for row in lines:
        number, letter, column = _split(row["line"])
        if column in TWO_COLUMN.values():
            continue  # printed beside its pair
        if row["section"] != section:
            section = row["section"]
            rows.append(f'<tr class="section"><td colspan="4">{html.escape(section)}</td></tr>')
        if column and number not in shown_numbers:
            heads = (
                ("Beginning of Period", "End of Period")
                if column == "_begin"
                else ("Number of Loans", "Principal Balance")
            )
            title = {"class_balance": "Note Balances", "class_factor": "Pool Factors"}.get(
                row["key"].split("_begin")[0], "Delinquency Analysis"
            )
            rows.append(
                f'<tr><td class="no">{number}.</td><td>{title}</td>'
                f"<th>{heads[0]}</th><th>{heads[1]}</th></tr>"
            )
        number_cell = f"{number}." if number not in shown_numbers else ""
        shown_numbers.add(number)
        label = html.escape(row["label"])
        total = (
            ' class="total"' if "sum" in row["label"] or row["label"].startswith("Total") else ""
        )
        first = display(row["value"], row["kind"])
        if column:
            pair = by_line.get(row["line"].replace(column, TWO_COLUMN[column]))
            second = display(pair["value"], pair["kind"]) if pair else ""
            rows.append(
                f'<tr{total}><td class="no"></td><td class="sub">{letter}. {label}</td>'
                f'<td class="amt">{first}</td><td class="amt">{second}</td></tr>'
            )
        elif letter:
            rows.append(
                f'<tr{total}><td class="no">{number_cell}</td>'
                f'<td class="sub">{letter}. {label}</td>'
                f'<td></td><td class="amt">{first}</td></tr>'
            )
        else:
            rows.append(
                f'<tr{total}><td class="no">{number}.</td><td>{label}</td>'
                f'<td></td><td class="amt">{first}</td></tr>'
            )
        # a lettered group's heading line (e.g. "17. Finance Charges:") is implied by its letters
    start: dt.date = period["collection_period_start_date"]
    end: dt.date = period["collection_period_end_date"]
    head = (
        f"<tr><td>Collection Period</td><td>{start:%m/%d/%y}-{end:%m/%d/%y}</td></tr>"
        f"<tr><td>Determination Date</td><td>{period['determination_date']:%m/%d/%Y}</td></tr>"
        f"<tr><td>Distribution Date</td><td>{period['distribution_date']:%m/%d/%Y}</td></tr>"
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>Monthly Servicer's Certificate {period['distribution_date']}</title>"
        f"<style>{STYLE}</style></head><body>"
        "<h1>MONTHLY SERVICER'S CERTIFICATE</h1><h2>CARMAX BUSINESS SERVICES, LLC</h2>"
        f"<h2>{html.escape(trust_name.upper())}</h2>"
        f'<table class="head">{head}</table>'
        f'<table class="lines">{"".join(rows)}</table>'
        "</body></html>"
    )
