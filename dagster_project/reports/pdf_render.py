"""A Document as a PDF (reportlab): letter pages laid out like the HTML, page numbers below."""

from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import LETTER
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import inch
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from dagster_project.reports.document import Document

STYLES = getSampleStyleSheet()
TITLE = ParagraphStyle("title", parent=STYLES["Title"], fontSize=13, spaceAfter=2)
SUBTITLE = ParagraphStyle("subtitle", parent=STYLES["Heading2"], fontSize=10.5, alignment=1)
CELL = ParagraphStyle("cell", parent=STYLES["BodyText"], fontSize=8, leading=9.5)
INDENTED = ParagraphStyle("indented", parent=CELL, leftIndent=12)
SECTION = ParagraphStyle("section", parent=CELL, fontName="Helvetica-Bold", fontSize=8.5)
WIDTHS = (0.6 * inch, 4.2 * inch, 1.35 * inch, 1.35 * inch)
CELL_PADDING = 6  # reportlab's default left and right padding of a table cell


def _footer(canvas, document) -> None:
    canvas.saveState()
    canvas.setFont("Helvetica", 7)
    canvas.drawRightString(LETTER[0] - 0.6 * inch, 0.45 * inch, f"page {document.page}")
    canvas.restoreState()


def _label(text: str, indent: bool, index: int, style: list):
    """A label cell: plain text when it fits on one line (laying out a Paragraph is most of a
    page's rendering time), a wrapping Paragraph otherwise."""
    room = WIDTHS[1] - 2 * CELL_PADDING - (INDENTED.leftIndent if indent else 0)
    if stringWidth(text, CELL.fontName, CELL.fontSize) > room:
        return Paragraph(escape(text), INDENTED if indent else CELL)
    if indent:
        style.append(("LEFTPADDING", (1, index), (1, index), CELL_PADDING + INDENTED.leftIndent))
    return text


def render_pdf(document: Document, path: Path) -> Path:
    story = [Paragraph(escape(document.title), TITLE)]
    story += [Paragraph(escape(s), SUBTITLE) for s in document.subtitles]
    if document.facts:
        facts = Table(
            [[escape(k), escape(v)] for k, v in document.facts],
            colWidths=(1.6 * inch, 2.4 * inch),
        )
        facts.setStyle(
            TableStyle([("FONTSIZE", (0, 0), (-1, -1), 8.5), ("LEFTPADDING", (0, 0), (-1, -1), 0)])
        )
        story.append(facts)
    story.append(Spacer(1, 8))
    if document.notice:
        story.append(Paragraph(escape(document.notice), SECTION))
    else:
        story += [Paragraph(escape(line), CELL) for line in document.banner]
        if document.banner:
            story.append(Spacer(1, 6))
        data, style = (
            [],
            [
                ("FONTSIZE", (0, 0), (-1, -1), 8),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("ALIGN", (2, 0), (3, -1), "RIGHT"),
                ("TOPPADDING", (0, 0), (-1, -1), 1),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
            ],
        )
        for index, row in enumerate(document.rows):
            if row.kind == "section":
                data.append([Paragraph(escape(row.label), SECTION), "", "", ""])
                style += [
                    ("SPAN", (0, index), (-1, index)),
                    ("LINEBELOW", (0, index), (-1, index), 0.6, colors.grey),
                    ("TOPPADDING", (0, index), (-1, index), 7),
                ]
                continue
            cells = ["", *row.amounts] if len(row.amounts) == 1 else list(row.amounts)
            data.append([row.number, _label(row.label, row.indent, index, style), *cells])
            if row.kind == "columns":
                style.append(("FONTNAME", (2, index), (3, index), "Helvetica-Oblique"))
            if row.total:
                style.append(("LINEABOVE", (2, index), (3, index), 0.4, colors.lightgrey))
        table = Table(data, colWidths=WIDTHS, repeatRows=0)
        table.setStyle(TableStyle(style))
        story.append(table)
        if document.notes:
            story += [Spacer(1, 8), Paragraph("Notes", SECTION)]
            story += [
                Paragraph(f"{number}. {escape(note)}", CELL)
                for number, note in enumerate(document.notes, 1)
            ]
    pdf = SimpleDocTemplate(
        str(path),
        pagesize=LETTER,
        title=f"{document.title} {document.facts[-1][1] if document.facts else ''}",
        leftMargin=0.6 * inch,
        rightMargin=0.6 * inch,
        topMargin=0.6 * inch,
        bottomMargin=0.7 * inch,
    )
    pdf.build(story, onFirstPage=_footer, onLaterPages=_footer)
    return path
