"""The documents people read, as rows that both renderers (HTML and PDF) lay out the same way.

The certificate keeps Exhibit A's line numbers, labels and headings; amounts are right-aligned
with $ and commas, in two columns where Exhibit A has them (lines 8 and 9: beginning and end of
period; line 78: number of loans and principal balance). Every amount is printed from the exact
DECIMAL text of the warehouse; nothing is rounded here except where the kind says how to print.
"""

import datetime as dt
import re
from dataclasses import dataclass, field
from decimal import Decimal

TWO_COLUMN = {"_begin": "_end", "_count": "_balance"}


@dataclass(frozen=True)
class Row:
    kind: str  # "section" (a heading), "group" (a numbered line's heading), "columns" (its two
    # column titles), "line"
    number: str = ""  # printed line number ("8.") or Section 4.9 item ("(ix)")
    label: str = ""
    amounts: tuple[str, ...] = ()  # one or two right-aligned cells
    indent: bool = False
    total: bool = False


@dataclass(frozen=True)
class Document:
    title: str
    subtitles: tuple[str, ...]
    facts: tuple[tuple[str, str], ...]  # (label, value) shown under the title
    rows: tuple[Row, ...] = ()
    notice: str = ""  # shown instead of rows (a withheld document says why)
    banner: tuple[str, ...] = ()  # shown above the rows (a restated certificate says what changed)
    column_titles: tuple[str, str] = ("", "")
    links: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (text, href)
    notes: tuple[str, ...] = ()  # printed under the rows (marts.rpt_certificate_notes)
    signature: tuple[str, ...] = ()  # the form's signature block, printed last
    footer: str = ""  # the PDF's running footer (with "page x of y")
    provenance: tuple[str, ...] = ()  # where the figures come from (reports/provenance.py)


def display(value: str | None, kind: str) -> str:
    """A warehouse value (exact text) as the certificate prints it: money with $ and commas,
    negative amounts in parentheses ($48.09 owed is "($48.09)"); "N/A" where a figure has no
    meaning (a weighted average of an empty pool)."""
    if value is None:
        return ""
    if value == "N/A":
        return value
    if kind == "money":
        amount = Decimal(value)
        return f"(${-amount:,.2f})" if amount < 0 else f"${amount:,.2f}"
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
        return {"Yes": "Yes", "No": "No"}.get(value) or ("Yes" if Decimal(value) == 1 else "No")
    return value


def _split(line: str) -> tuple[str, str, str]:
    """'8a_begin' -> ('8', 'a', '_begin')."""
    match = re.fullmatch(r"(\d+)([a-z]?)(_[a-z]+)?", line)
    number, letter, column = match.groups()
    return number, letter, column or ""


def _is_total(label: str) -> bool:
    """A line Exhibit A sums ("(sum a - c)", "Total Class A-1 Note Interest"); the Total Daily
    Deposits of line 43 are deposits, not a total."""
    return "sum" in label or (label.startswith("Total") and not label.startswith("Total Daily"))


def _period_facts(period: dict) -> tuple[tuple[str, str], ...]:
    start: dt.date = period["collection_period_start_date"]
    end: dt.date = period["collection_period_end_date"]
    return (
        ("Collection Period", f"{start:%m/%d/%y}-{end:%m/%d/%y}"),
        ("Determination Date", f"{period['determination_date']:%m/%d/%Y}"),
        ("Distribution Date", f"{period['distribution_date']:%m/%d/%Y}"),
    )


def certificate_document(
    trust_name: str,
    period: dict,
    lines: list[dict],
    notes: tuple[str, ...] = (),
    servicer: str = "CarMax Business Services, LLC",
) -> Document:
    """`lines`: rows of marts.rpt_servicer_certificate for one date, in line order (a lettered
    line carries its group's heading, e.g. 17 "Finance Charges:"); `notes`: the date's rows of
    marts.rpt_certificate_notes."""
    rows: list[Row] = []
    section = None
    shown: set[str] = set()
    by_line = {row["line"]: row for row in lines}
    for row in lines:
        number, letter, column = _split(row["line"])
        if column in TWO_COLUMN.values():
            continue  # printed beside its pair
        if row["section"] != section:
            section = row["section"]
            rows.append(Row("section", label=section))
        first = display(row["value"], row["kind"])
        group = row.get("group_label") or ""
        if column:
            if number not in shown:
                heads = (
                    ("Beginning of Period", "End of Period")
                    if column == "_begin"
                    else ("Number of Loans", "Principal Balance")
                )
                rows.append(Row("columns", f"{number}.", group, heads))
            pair = by_line.get(row["line"].replace(column, TWO_COLUMN[column]))
            second = display(pair["value"], pair["kind"]) if pair else ""
            rows.append(
                Row("line", "", f"{letter}. {row['label']}", (first, second), True,
                    _is_total(row["label"]))
            )  # fmt: skip
        elif letter:
            if number not in shown and group:
                rows.append(Row("group", f"{number}.", group))
            rows.append(
                Row("line", "" if number in shown or group else f"{number}.",
                    f"{letter}. {row['label']}", (first,), True, _is_total(row["label"]))
            )  # fmt: skip
        else:
            rows.append(Row("line", f"{number}.", row["label"], (first,), False, False))
        shown.add(number)
    facts = _period_facts(period)
    return Document(
        title="MONTHLY SERVICER'S CERTIFICATE",
        subtitles=(servicer.upper(), trust_name.upper()),
        facts=facts,
        rows=tuple(rows),
        notes=notes,
        # Exhibit A's closing: executed on the Determination Date by an officer of the Servicer
        signature=(
            "IN WITNESS WHEREOF, the undersigned has duly executed this certificate on "
            f"{period['determination_date']:%B %d, %Y}.",
            servicer.upper(),
            "As Servicer",
            "By: ________________________________",
            "Name: ______________________________",
            "Title: _____________________________",
        ),
        footer=f"{trust_name} \u00b7 Monthly Servicer's Certificate \u00b7 Distribution Date "
        f"{facts[-1][1]}",
    )


def _common_ending(texts: list[str]) -> str:
    """The words every text ends with ("after the distribution")."""
    words = [text.split() for text in texts]
    common: list[str] = []
    while (
        all(len(w) > len(common) + 1 for w in words)
        and len({w[-1 - len(common)] for w in words}) == 1
    ):
        common.insert(0, words[0][-1 - len(common)])
    return " ".join(common)


def _statement_item(item: str, details: list[tuple]) -> list[Row]:
    """One Section 4.9 item's rows: a plain line each, or a table when the item has a value per
    class (Class A-1, ...) or per bucket ("31-60 days delinquent: number" and ": Principal
    Balance"), in one or two columns."""
    by_class = all(class_id for _, class_id, _, _ in details)
    by_bucket = (
        not by_class
        and len(details) > 1
        and all(": " in description for description, *_ in details)
    )
    if not (by_class or by_bucket):
        return [
            Row("line", item if index == 0 else "", description, (display(value, kind),))
            for index, (description, _, value, kind) in enumerate(details)
        ]
    cells: dict[str, dict[str, str]] = {}
    kinds: dict[str, str] = {}
    for description, class_id, value, kind in details:
        key, column = (f"Class {class_id}", description) if by_class else description.split(": ", 1)
        cells.setdefault(key, {})[column] = display(value, kind)
        kinds[column] = kind
    # counts, then money, then factors and rates (the certificate's order: loans, balance)
    rank = {"count": 0, "money": 1}
    columns = sorted(kinds, key=lambda column: rank.get(kinds[column], 2))
    if len(columns) == 1:
        rows = [Row("group", item, columns[0])]
        rows += [Row("line", "", key, (values[columns[0]],), True) for key, values in cells.items()]
        return rows
    ending = _common_ending(columns) if by_class else ""
    heads = tuple(c.removesuffix(ending).strip() if ending else c for c in columns[:2])
    label = f"{heads[0]} and {heads[1]} {ending}" if ending else "Delinquent Receivables"
    rows = [Row("columns", item, label, tuple(h[:1].upper() + h[1:] for h in heads))]
    rows += [
        Row("line", "", key, tuple(values.get(c, "") for c in columns[:2]), True)
        for key, values in cells.items()
    ]
    return rows


def statement_document(trust_name: str, distribution: dt.date, items: list[tuple]) -> Document:
    """Section 4.9 items (i) to (xxii): (item, description, class_id, value, kind) rows in item
    order; flags print Yes or No."""
    grouped: dict[str, list[tuple]] = {}
    for item, description, class_id, value, kind in items:
        grouped.setdefault(item, []).append((description, class_id, value, kind))
    rows = (Row("section", label="Section 4.9 items"),) + tuple(
        row for item, details in grouped.items() for row in _statement_item(item, details)
    )
    return Document(
        title="STATEMENT TO NOTEHOLDERS",
        subtitles=(trust_name, "Section 4.9 of the Sale and Servicing Agreement"),
        facts=(("Distribution Date", f"{distribution:%m/%d/%Y}"),),
        rows=rows,
        footer=f"{trust_name} \u00b7 Statement to Noteholders \u00b7 Distribution Date "
        f"{distribution:%m/%d/%Y}",
    )


def withheld_document(
    trust_name: str,
    title: str,
    distribution: dt.date,
    reason: str,
    standing: tuple[str, str] | None = None,
) -> Document:
    """`standing`: (text, href) of the last published version, which still stands."""
    stands = f" The last published version stands: {standing[0]}." if standing else ""
    return Document(
        title=title.upper(),
        subtitles=(trust_name,),
        facts=(("Distribution Date", f"{distribution:%m/%d/%Y}"),),
        notice=f"Withheld: this document is not published. Why: {reason}.{stands}",
        links=(("auditor report", "../auditor/index.html"), *((standing,) if standing else ())),
    )


def restated_banner(version: int, published_at, previous, changed: list[tuple]) -> tuple[str, ...]:
    """What changed from the previous published version: (line, label, old, new) rows."""
    head = (
        f"Version {version}, published {published_at:%Y-%m-%d %H:%M} UTC: restated. It replaces "
        f"version {previous.version} of {previous.published_at:%Y-%m-%d %H:%M} UTC; "
        f"{len(changed)} lines changed:"
    )
    return (head, *(f"{line} {label}: {old} \u2192 {new}" for line, label, old, new in changed))
