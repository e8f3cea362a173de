"""A Document as a PDF (reportlab): letter pages laid out like the HTML.

Each section of the form is a Section flowable: a heading is never the last thing on a page (it
moves with at least two of its rows), and a section split across pages starts the next page with
its heading and "(continued)", and with its line's heading when the split falls inside a
lettered group (29 d. ... then "29. Class A Noteholder Interest Amounts (continued)"). Every
page's footer names the document (deal, Distribution Date) and says "page x of y" (a PDF form
per page, drawn once the layout has counted the pages).
"""

from dataclasses import dataclass, replace
from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import LETTER
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import inch
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    Flowable,
    KeepTogether,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from dagster_project.reports.document import Document, Row

STYLES = getSampleStyleSheet()
TITLE = ParagraphStyle("title", parent=STYLES["Title"], fontSize=13, spaceAfter=2)
SUBTITLE = ParagraphStyle("subtitle", parent=STYLES["Heading2"], fontSize=10.5, alignment=1)
CELL = ParagraphStyle("cell", parent=STYLES["BodyText"], fontSize=8, leading=9.5)
INDENTED = ParagraphStyle("indented", parent=CELL, leftIndent=12)
HEAD = ParagraphStyle("head", parent=CELL, fontName="Helvetica-Oblique", alignment=TA_RIGHT)
SMALL = ParagraphStyle("small", parent=CELL, fontSize=6.5, leading=8, textColor=colors.dimgrey)
SECTION = ParagraphStyle("section", parent=CELL, fontName="Helvetica-Bold", fontSize=8.5)
FRAME_WIDTH = 7.3 * inch  # letter, less the margins
AMOUNT_WIDTH = 1.35 * inch
CELL_PADDING = 6  # reportlab's default left and right padding of a table cell
MARGIN = 0.6 * inch
BASE_STYLE = (
    ("FONTSIZE", (0, 0), (-1, -1), 8),
    ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ("ALIGN", (2, 0), (3, -1), "RIGHT"),
    ("TOPPADDING", (0, 0), (-1, -1), 1),
    ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
)
KEPT_WITH_HEADING = 2  # rows a heading takes with it onto a page


@dataclass(frozen=True)
class _Line:
    """One table row: its cells, its style commands (column ranges; the row is filled in when
    the table is made) and the numbered line it belongs to."""

    cells: tuple
    styles: tuple = ()
    group: Row | None = None  # the heading row of its lettered group, if any
    numbered: bool = False  # prints its line number (the start of a line or group)


def _widths(document: Document) -> tuple[float, ...]:
    """Number, label and two amount columns across the frame; the number column as wide as the
    longest number ("1122(d)(4)(xiv)"), at least 0.6 inch."""
    longest = max((stringWidth(r.number, CELL.fontName, 8) for r in document.rows), default=0)
    number = max(0.6 * inch, longest + 2 * CELL_PADDING + 4)
    return (number, FRAME_WIDTH - number - 2 * AMOUNT_WIDTH, AMOUNT_WIDTH, AMOUNT_WIDTH)


def _label(text: str, indent: bool, styles: list, widths: tuple):
    """A label cell: plain text when it fits on one line (laying out a Paragraph is most of a
    page's rendering time), a wrapping Paragraph otherwise."""
    room = widths[1] - 2 * CELL_PADDING - (INDENTED.leftIndent if indent else 0)
    if stringWidth(text, CELL.fontName, CELL.fontSize) > room:
        return Paragraph(escape(text), INDENTED if indent else CELL)
    if indent:
        styles.append(("LEFTPADDING", 1, 1, CELL_PADDING + INDENTED.leftIndent))
    return text


def _line(row: Row, group: Row | None, widths: tuple) -> _Line:
    styles: list = []
    if row.kind == "section":
        return _Line(
            (Paragraph(escape(row.label), SECTION), "", "", ""),
            (("SPAN", 0, -1), ("LINEBELOW", 0, -1, 0.6, colors.grey), ("TOPPADDING", 0, -1, 7)),
        )
    if row.kind == "group":
        return _Line((row.number, _label(row.label, False, styles, widths), "", ""), tuple(styles),
                     row, True)  # fmt: skip
    cells = ["", *row.amounts] if len(row.amounts) == 1 else list(row.amounts)
    label = _label(row.label, row.indent, styles, widths)
    if row.kind == "columns":  # column titles wrap within their column
        cells = [Paragraph(escape(head), HEAD) for head in cells]
        group = row
    if row.total:
        styles.append(("LINEABOVE", 2, 3, 0.4, colors.lightgrey))
    return _Line((row.number, label, *cells), tuple(styles), group, bool(row.number))


def _table(lines: list[_Line], widths: tuple) -> Table:
    commands = list(BASE_STYLE)
    for index, line in enumerate(lines):
        for name, first, last, *args in line.styles:
            commands.append((name, (first, index), (last, index), *args))
    empty = ("",) * len(widths)  # a short line's cells end in empty ones
    table = Table([[*line.cells, *empty[len(line.cells) :]] for line in lines], colWidths=widths)
    table.setStyle(TableStyle(commands))
    return table


def _continued(row: Row) -> Row:
    if row.label.endswith("(continued)"):
        return row
    return replace(row, label=f"{row.label} (continued)")


class Section(Flowable):
    """A heading and its rows (a Flowable, the way platypus is extended): laid out as one table,
    split between pages as the module docstring says."""

    def __init__(self, heading: Row, rows: list[tuple[Row, Row | None]], widths: tuple):
        super().__init__()
        self.heading = heading
        self.rows = rows  # each row with its group's heading row
        self.widths = widths
        self.table: Table | None = None
        self._made: list[_Line] | None = None

    def _lines(self, count: int | None = None) -> list[_Line]:
        """The heading's line and the first `count` rows' (all by default), made once: a
        Paragraph's parse is a large part of a page's layout, and a split tries several counts."""
        if self._made is None:
            self._made = [
                _line(self.heading, None, self.widths),
                *(_line(row, group, self.widths) for row, group in self.rows),
            ]
        return self._made if count is None else self._made[: count + 1]

    def wrap(self, available_width, available_height):
        self.table = _table(self._lines(), self.widths)
        return self.table.wrap(available_width, available_height)

    def draw(self):
        self.table.drawOn(self.canv, 0, 0)

    def _fitting(self, available_width, available_height) -> int:
        """The most rows that fit under the heading. A table's rows are as high as their own
        cells make them (no cell spans rows), so each line is measured once, alone, and the
        count their running total allows is confirmed on the table itself."""
        lines = self._lines()
        height = 0.0
        count = -1  # the heading's line comes first
        for line in lines:
            height += _table([line], self.widths).wrap(available_width, available_height)[1]
            if height > available_height:
                break
            count += 1
        count = min(max(count, 0), len(self.rows))
        while count:
            table = _table(self._lines(count), self.widths)
            if table.wrap(available_width, available_height)[1] <= available_height:
                break
            count -= 1
        return count

    def split(self, available_width, available_height):
        low = self._fitting(available_width, available_height)
        while low and self.rows[low - 1][0].kind in ("group", "columns"):
            low -= 1  # a line's heading stays with its first row
        if low < min(KEPT_WITH_HEADING, len(self.rows)):
            return []  # the whole section to the next page
        if low == len(self.rows):
            return [self]
        rest = self.rows[low:]
        row, group = rest[0]
        if group is not None and row is not group and row.kind != "group":
            rest = [(_continued(group), None), *rest]  # the line's heading, again
        first = Section(self.heading, self.rows[:low], self.widths)
        first._made = self._lines(low)  # the same lines, already made
        return [first, Section(_continued(self.heading), rest, self.widths)]


def _sections(document: Document) -> list[Section]:
    sections: list[Section] = []
    widths = _widths(document)
    group = None
    for row in document.rows:
        if row.kind == "section":
            sections.append(Section(row, [], widths))
            continue
        if not sections:
            sections.append(Section(Row("section"), [], widths))
        if row.kind in ("group", "columns"):
            group = row
        elif row.number:
            group = None  # a new numbered line ends the group before it
        sections[-1].rows.append((row, group))
    return sections


def _story(document: Document) -> list:
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
        return [*story, Paragraph(escape(document.notice), SECTION)]
    story += [Paragraph(escape(line), CELL) for line in document.banner]
    if document.banner:
        story.append(Spacer(1, 6))
    story += _sections(document)
    if document.notes:
        notes = [Spacer(1, 8), Paragraph("Notes", SECTION)]
        notes += [
            Paragraph(f"{number}. {escape(note)}", CELL)
            for number, note in enumerate(document.notes, 1)
        ]
        story.append(KeepTogether(notes))
    if document.signature:
        block = [Spacer(1, 14), Paragraph(escape(document.signature[0]), CELL), Spacer(1, 10)]
        block += [Paragraph(escape(line), CELL) for line in document.signature[1:]]
        story.append(KeepTogether(block))
    if document.provenance:
        block = [Spacer(1, 12), Paragraph("Provenance", SECTION)]
        block += [Paragraph(escape(line), SMALL) for line in document.provenance]
        story.append(KeepTogether(block))
    return story


FOOTER_Y = 0.45 * inch
FOOTER_FONT = ("Helvetica", 7)


def _page_number_form(page: int) -> str:
    """The name of the PDF form holding "page x of y" for page x, drawn once the page count is
    known (the layout runs once)."""
    return f"page-{page}"


class _PageCountingCanvas(Canvas):
    """The canvas of ReportLab's `canvasmaker` hook: before it is saved it defines the form of
    each page's "page x of y", which the page's footer drew by name."""

    def save(self) -> None:
        pages = self.getPageNumber() - 1  # the number of the page after the last
        for page in range(1, pages + 1):
            text = f"page {page} of {pages}"
            # the form's box: the text, right-aligned at the origin
            width = stringWidth(text, *FOOTER_FONT)
            self.beginForm(_page_number_form(page), -width, -2, 0, 7)
            self.setFont(*FOOTER_FONT)
            self.drawRightString(0, 0, text)
            self.endForm()
        super().save()


def _footer(document: Document):
    def draw(canvas, doc) -> None:
        canvas.saveState()
        canvas.setFont(*FOOTER_FONT)
        if document.footer:
            canvas.drawString(MARGIN, FOOTER_Y, document.footer)
        canvas.translate(LETTER[0] - MARGIN, FOOTER_Y)
        canvas.doForm(_page_number_form(doc.page))
        canvas.restoreState()

    return draw


def render_pdf(document: Document, path: Path) -> Path:
    pdf = SimpleDocTemplate(
        str(path),
        pagesize=LETTER,
        title=f"{document.title} {document.facts[-1][1] if document.facts else ''}",
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=0.7 * inch,
    )
    footer = _footer(document)
    pdf.build(
        _story(document), onFirstPage=footer, onLaterPages=footer, canvasmaker=_PageCountingCanvas
    )
    return path
