"""A Document as an HTML page: the form's layout, amounts right-aligned, printable."""

import html

from dagster_project.reports.document import Document

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
p.notice { border: 2px solid #a40000; padding: 1em; }
div.banner { border: 2px solid #b36b00; padding: 0.3em 1em; font-size: 0.9em; }
div.banner p { margin: 0.2em 0; }
div.notes { font-size: 0.85em; margin-top: 1.2em; max-width: 52em; }
div.notes h3 { font-size: 1em; margin: 0 0 0.3em; }
div.notes p { margin: 0.2em 0; }
div.provenance { font-size: 0.75em; color: #555; margin-top: 2em; word-break: break-all; }
div.provenance h3 { font-size: 1em; margin: 0 0 0.3em; } div.provenance p { margin: 0.1em 0; }
div.signature { margin-top: 2em; } div.signature p { margin: 0.4em 0; }
div.signature p:first-child { margin-bottom: 1.2em; }
@media print { body { margin: 0; } tr.section, tr.group { break-after: avoid; } }
"""


def _row(row) -> str:
    e = html.escape
    if row.kind == "section":
        return f'<tr class="section"><td colspan="4">{e(row.label)}</td></tr>'
    if row.kind == "group":
        return (
            f'<tr class="group"><td class="no">{e(row.number)}</td>'
            f'<td colspan="3">{e(row.label)}</td></tr>'
        )
    if row.kind == "columns":
        return (
            f'<tr><td class="no">{e(row.number)}</td><td>{e(row.label)}</td>'
            f"<th>{e(row.amounts[0])}</th><th>{e(row.amounts[1])}</th></tr>"
        )
    cells = ("", *row.amounts) if len(row.amounts) == 1 else row.amounts
    label_class = ' class="sub"' if row.indent else ""
    total = ' class="total"' if row.total else ""
    return (
        f'<tr{total}><td class="no">{e(row.number)}</td><td{label_class}>{e(row.label)}</td>'
        + "".join(f'<td class="amt">{e(cell)}</td>' for cell in cells)
        + "</tr>"
    )


def render_html(document: Document) -> str:
    e = html.escape
    facts = "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in document.facts)
    subtitles = "".join(f"<h2>{e(s)}</h2>" for s in document.subtitles)
    links = " ".join(f'<a href="{e(href)}">{e(text)}</a>' for text, href in document.links)
    banner = (
        '<div class="banner">' + "".join(f"<p>{e(line)}</p>" for line in document.banner) + "</div>"
        if document.banner
        else ""
    )
    notes = (
        '<div class="notes"><h3>Notes</h3>'
        + "".join(f"<p>{number}. {e(note)}</p>" for number, note in enumerate(document.notes, 1))
        + "</div>"
        if document.notes
        else ""
    )
    signature = (
        f'<div class="signature"><p>{e(document.signature[0])}</p>'
        + "".join(f"<p>{e(line)}</p>" for line in document.signature[1:])
        + "</div>"
        if document.signature
        else ""
    )
    provenance = (
        '<div class="provenance"><h3>Provenance</h3>'
        + "".join(f"<p>{e(line)}</p>" for line in document.provenance)
        + "</div>"
        if document.provenance
        else ""
    )
    body = (
        f'<p class="notice">{e(document.notice)}</p><p>{links}</p>'
        if document.notice
        else f'{banner}<table class="lines">{"".join(_row(r) for r in document.rows)}</table>'
        + notes
        + signature
        + provenance
    )
    title = f"{document.title} {document.facts[-1][1] if document.facts else ''}"
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{e(title)}</title>'
        f"<style>{STYLE}</style></head><body><h1>{e(document.title)}</h1>{subtitles}"
        f'<table class="head">{facts}</table>{body}</body></html>'
    )
