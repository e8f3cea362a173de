"""The reports' charts as inline SVG: line charts (dates or numbers along x, one or two y axes,
stacked areas) and horizontal bar charts, drawn by the browser from a few hundred bytes of markup
per series. The output is reproducible: the same data gives the same bytes.

Values are floats here, for drawing only; the pages print the exact figures in tables beside the
charts. A value that is None or NaN leaves a gap in its line.
"""

import datetime as dt
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

WIDTH = 850  # the viewBox's units; the chart is drawn as wide as the page's text column
PLOT_HEIGHT = 250  # the plot area's; the chart is as tall as that, its legend and its labels
FONT = 11  # tick labels and legend; axis labels one larger, the title two
CHAR = 0.56  # average character width of the sans-serif font, in ems (for the margins)
# matplotlib's "tab10" colours, in order, for the series given none
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip
DASHES = {"solid": "", "dash": "7 3.5", "dot": "1.5 3", "dashdot": "7 3 1.5 3"}
STYLES = tuple(DASHES)  # the styles cycled through when many lines must be told apart


@dataclass(frozen=True)
class Line:
    """One series: x values (dates or numbers) and y values (None or NaN for none)."""

    label: str
    x: Sequence
    y: Sequence
    style: str = "solid"  # a key of DASHES
    colour: str | None = None
    right: bool = False  # drawn against the right-hand axis
    width: float = 1.6


@dataclass(frozen=True)
class Scale:
    """A linear map from data values [low, high] to pixels [start, end], with its tick values
    and their labels."""

    low: float
    high: float
    start: float
    end: float
    ticks: tuple[tuple[float, str], ...]

    def __call__(self, value: float) -> float:
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)


def _x_number(value) -> float:
    """Dates (and datetimes, pandas Timestamps) count as days."""
    return float(value.toordinal()) if hasattr(value, "toordinal") else float(value)


def _finite(value) -> bool:
    """A value to draw: a number, not None, NaN, an infinity or pandas' NA."""
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def nice_ticks(
    low: float, high: float, most: int = 7, whole: bool = False
) -> tuple[float, float, list[float], int]:
    """Round tick values covering [low, high]: a step of 1, 2, 2.5 or 5 times a power of ten
    (whole numbers only with `whole`), at most `most` ticks. Returns (first tick, last tick,
    ticks, decimals for their labels)."""
    if not high > low:  # one value: a range around it, a tenth of it each way (or one unit)
        pad = abs(low) / 10 or 1.0
        low, high = low - pad, high + pad
    raw = max((high - low) / (most - 1), 1.0 if whole else 0.0)
    power = 10 ** math.floor(math.log10(raw))
    multiples = (1, 2, 5, 10) if whole and power == 1 else (1, 2, 2.5, 5, 10)
    step, multiple = next((m * power, m) for m in multiples if m * power >= raw)
    first = math.floor(low / step + 1e-9) * step
    last = math.ceil(high / step - 1e-9) * step
    count = round((last - first) / step)
    # the decimals of the step (2.5 x 10^k has one more than 10^k, where k < 1)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9) + (1 if multiple == 2.5 else 0))
    return first, last, [first + i * step for i in range(count + 1)], decimals


def _number_label(value: float, decimals: int) -> str:
    text = f"{value:,.{decimals}f}"
    return "0" if text.strip("-0.,") == "" else text


def _number_scale(low, high, start, end, floor=None, ceiling=None, whole=False) -> Scale:
    first, last, ticks, decimals = nice_ticks(
        low if floor is None else floor, high if ceiling is None else ceiling, whole=whole
    )
    first = first if floor is None else floor
    last = last if ceiling is None else ceiling
    shown = [t for t in ticks if first - 1e-9 <= t <= last + 1e-9]
    return Scale(first, last, start, end, tuple((t, _number_label(t, decimals)) for t in shown))


MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120)


def _date_scale(low: float, high: float, start: float, end: float) -> Scale:
    """Ticks on the first day of a month: every 1, 2, 3 or 6 months (labelled YYYY-MM) or every
    1, 2, 5 or 10 years (labelled YYYY), at most eight."""
    first = dt.date.fromordinal(int(low))
    last = dt.date.fromordinal(int(math.ceil(high)))
    months = (last.year - first.year) * 12 + last.month - first.month + 1
    step = next((s for s in MONTH_STEPS if months / s <= 8), MONTH_STEPS[-1])
    ticks = []
    index = first.year * 12 + first.month - 1  # months since year 0, from the first date's month
    while index <= last.year * 12 + last.month - 1:
        year, month = divmod(index, 12)
        month += 1
        day = dt.date(year, month, 1)
        on_step = (month - 1) % step == 0 if step < 12 else month == 1 and year % (step // 12) == 0
        if on_step and low <= day.toordinal() <= high:
            ticks.append(
                (float(day.toordinal()), f"{year}" if step >= 12 else f"{year}-{month:02}")
            )
        index += 1
    if not ticks:  # a span inside one month: its first date's month, where that date is
        ticks.append((low, f"{first.year}-{first.month:02}"))
    pad = max((high - low) * 0.02, 1.0)
    return Scale(low - pad, high + pad, start, end, tuple(ticks))


def _text(x, y, text, size=FONT, anchor="start", extra="", width: float | None = None) -> str:
    """A label; one longer than `width` (when given) is cut with an ellipsis and keeps its whole
    text as a tooltip."""
    shown, tooltip = text, ""
    if width is not None and _text_width(text, size) > width:
        shown = text[: max(int(width / (size * CHAR)) - 1, 1)] + "\u2026"
        tooltip = f"<title>{html.escape(text)}</title>"
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
        f"{tooltip}{html.escape(shown)}</text>"
    )


def _text_width(text: str, size: float = FONT) -> float:
    return len(text) * size * CHAR


def _path(points: list[tuple[float, float] | None]) -> str:
    """An SVG path through the points, broken where a point is None."""
    parts, pen_down = [], False
    for point in points:
        if point is None:
            pen_down = False
            continue
        parts.append(f"{'L' if pen_down else 'M'}{point[0]:.1f} {point[1]:.1f}")
        pen_down = True
    return "".join(parts)


def _lone(points: list[tuple[float, float] | None]) -> list[tuple[float, float]]:
    """The points without a neighbour to join (a line draws nothing for them)."""
    padded = [None, *points, None]
    return [
        point
        for before, point, after in zip(padded, padded[1:], padded[2:], strict=False)
        if point is not None and before is None and after is None
    ]


def _legend(entries: list[tuple[str, str, str, bool]], left: float, right: float, top: float):
    """The legend above the plot: (label, colour, style, filled swatch) items in one row when they
    fit, else in aligned columns as wide as the longest item. Returns (markup, height)."""
    if not entries:
        return "", 0.0
    row_height = FONT + 6
    widths = [26 + _text_width(label) + 14 for label, *_ in entries]
    if sum(widths) <= right - left:
        places = [(left + sum(widths[:n]), 0) for n in range(len(entries))]
    else:
        columns = max(1, int((right - left) // max(widths)))
        column = (right - left) / columns
        places = [(left + (n % columns) * column, n // columns) for n in range(len(entries))]
    out = []
    for (label, colour, style, filled), (x, row) in zip(entries, places, strict=True):
        y = top + FONT + row * row_height
        if filled:
            out.append(
                f'<rect x="{x:.1f}" y="{y - 8:.1f}" width="18" height="9" fill="{colour}" '
                'fill-opacity="0.85"/>'
            )
        else:
            dash = f' stroke-dasharray="{DASHES[style]}"' if DASHES[style] else ""
            out.append(
                f'<path d="M{x:.1f} {y - 3.5:.1f}h20" stroke="{colour}" stroke-width="2"{dash}/>'
            )
        out.append(_text(x + 26, y, label))
    rows = places[-1][1] + 1
    return "".join(out), rows * row_height + 4


def _svg(alt: str, height: float, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" role="img" '
        f'aria-label="{html.escape(alt)}" style="width:100%;height:auto;display:block" '
        f'font-family="Helvetica, Arial, sans-serif" fill="#222"><title>{html.escape(alt)}'
        f"</title>{body}</svg>"
    )


def line_chart(
    lines: Sequence[Line],
    *,
    alt: str,
    title: str = "",
    x_label: str = "",
    y_label: str = "",
    right_label: str = "",
    areas: Sequence[Line] = (),
    y_floor: float | None = None,
    y_ceiling: float | None = None,
    legend: bool = True,
) -> str:
    """A line chart as inline SVG. `areas` are stacked on each other (the first at the bottom)
    under the lines, against the left axis; `y_floor`/`y_ceiling` fix the left axis's ends
    (otherwise round values around the data). The legend sits above the plot."""
    stacked: list[list[float]] = []
    running: list[float] = []
    for area in areas:
        values = [float(v) if _finite(v) else 0.0 for v in area.y]
        running = [a + b for a, b in zip(running or [0.0] * len(values), values, strict=True)]
        stacked.append(list(running))
    every = [*areas, *lines]
    colours = {}
    for number, series in enumerate(every):
        colours[id(series)] = series.colour or COLOURS[number % len(COLOURS)]
    xs = [_x_number(x) for series in every for x in series.x]
    dates = any(hasattr(x, "toordinal") for series in every for x in series.x)
    left_values = [float(v) for s in lines if not s.right for v in s.y if _finite(v)]
    left_values += [v for values in stacked for v in values]
    right_values = [float(v) for s in lines if s.right for v in s.y if _finite(v)]

    title_height = FONT + 10 if title else 0
    entries = [(s.label, colours[id(s)], s.style, True) for s in areas] + [
        (s.label, colours[id(s)], s.style, False) for s in lines
    ]
    # the y scales' ticks first: the margins hold their labels, the plot lies between them
    y_scale = _number_scale(
        min(left_values, default=0.0), max(left_values, default=1.0), 0, 1, y_floor, y_ceiling
    )
    left = 14 + max(_text_width(label) for _, label in y_scale.ticks) + (22 if y_label else 0)
    right = 16
    has_right = any(series.right for series in lines)
    if has_right:
        right_scale = _number_scale(
            min(right_values, default=0.0), max(right_values, default=1.0), 0, 1
        )
        right = 14 + max(_text_width(label) for _, label in right_scale.ticks)
        right += 22 if right_label else 0
    legend_markup, legend_height = (
        _legend(entries, left, WIDTH - right, title_height + 4) if legend else ("", 0.0)
    )
    top = title_height + legend_height + 10
    bottom = top + PLOT_HEIGHT
    height = bottom + (FONT + 12) + (FONT + 12 if x_label else 0)
    x_low, x_high = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if dates:
        x_scale = _date_scale(x_low, x_high, left, WIDTH - right)
    else:
        x_scale = _number_scale(x_low, x_high, left, WIDTH - right)
    y_scale = replace(y_scale, start=bottom, end=top)
    out = [_text(WIDTH / 2, FONT + 4, title, FONT + 2, "middle")] if title else []
    out.append(legend_markup)
    out.append(_axes(x_scale, y_scale, left, right, top, bottom))
    if has_right:
        right_scale = replace(right_scale, start=bottom, end=top)
        for value, label in right_scale.ticks:
            y = right_scale(value)
            out.append(f'<path d="M{WIDTH - right:.1f} {y:.1f}h4" stroke="#333"/>')
            out.append(_text(WIDTH - right + 7, y + FONT / 3, label))
        if right_label:
            out.append(_vertical_label(WIDTH - 8, (top + bottom) / 2, right_label))
    if y_label:
        out.append(_vertical_label(14, (top + bottom) / 2, y_label))
    if x_label:
        out.append(_text((left + WIDTH - right) / 2, height - 8, x_label, FONT + 1, "middle"))
    below = [bottom] * (len(stacked[0]) if stacked else 0)
    for area, values in zip(areas, stacked, strict=True):
        xs_px = [x_scale(_x_number(x)) for x in area.x]
        upper = [(x, y_scale(v)) for x, v in zip(xs_px, values, strict=True)]
        lower = [(x, y) for x, y in zip(xs_px, below, strict=True)][::-1]
        out.append(
            f'<path d="{_path(upper + lower)}Z" fill="{colours[id(area)]}" fill-opacity="0.85"/>'
        )
        below = [y for _, y in upper]
    for series in lines:
        scale = right_scale if series.right else y_scale
        points = [
            (x_scale(_x_number(x)), scale(float(y))) if _finite(y) else None
            for x, y in zip(series.x, series.y, strict=True)
        ]
        dash = f' stroke-dasharray="{DASHES[series.style]}"' if DASHES[series.style] else ""
        out.append(
            f'<path d="{_path(points)}" fill="none" stroke="{colours[id(series)]}" '
            f'stroke-width="{series.width}" stroke-linejoin="round"{dash}/>'
        )
        out.extend(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colours[id(series)]}"/>'
            for x, y in _lone(points)
        )
    return _svg(alt, height, "".join(out))


def _vertical_label(x: float, y: float, text: str) -> str:
    return _text(x, y, text, FONT + 1, "middle", f' transform="rotate(-90 {x:.1f} {y:.1f})"')


def _axes(x_scale: Scale, y_scale: Scale, left, right, top, bottom) -> str:
    """The grid, the frame and the tick labels of both axes."""
    out = []
    for value, label in y_scale.ticks:
        y = y_scale(value)
        out.append(f'<path d="M{left:.1f} {y:.1f}H{WIDTH - right:.1f}" stroke="#e2e2e2"/>')
        out.append(_text(left - 7, y + FONT / 3, label, anchor="end"))
    for value, label in x_scale.ticks:
        x = x_scale(value)
        out.append(f'<path d="M{x:.1f} {top:.1f}V{bottom:.1f}" stroke="#e2e2e2"/>')
        out.append(_text(x, bottom + FONT + 6, label, anchor="middle"))
    out.append(
        f'<rect x="{left:.1f}" y="{top:.1f}" width="{WIDTH - right - left:.1f}" '
        f'height="{bottom - top:.1f}" fill="none" stroke="#333"/>'
    )
    return "".join(out)


def bar_chart(counts: dict[str, int], title: str, unit: str = "receivables") -> str:
    """Horizontal bars, one per label, in the order given, each with its count."""
    bar, gap = 18, 8
    label_width = min(max(_text_width(label) for label in counts) + 12, WIDTH * 0.45)
    top = FONT + 16
    height = top + len(counts) * (bar + gap) + 2 * FONT + 20
    scale = _number_scale(
        0, max(counts.values(), default=1), label_width, WIDTH - 40, floor=0, whole=True
    )
    bottom = top + len(counts) * (bar + gap)
    out = [_text(WIDTH / 2, FONT + 4, title, FONT + 2, "middle")]
    for value, label in scale.ticks:
        x = scale(value)
        out.append(f'<path d="M{x:.1f} {top}V{bottom}" stroke="#e2e2e2"/>')
        out.append(_text(x, bottom + FONT + 6, label, anchor="middle"))
    for number, (label, count) in enumerate(counts.items()):
        y = top + gap / 2 + number * (bar + gap)
        width = scale(count) - label_width
        out.append(
            f'<rect x="{label_width:.1f}" y="{y:.1f}" width="{width:.1f}" height="{bar}" '
            'fill="steelblue"/>'
        )
        out.append(
            _text(label_width - 8, y + bar / 2 + FONT / 3, label, anchor="end",
                  width=label_width - 12)
        )  # fmt: skip
        out.append(_text(label_width + width + 5, y + bar / 2 + FONT / 3, f"{count:,}"))
    out.append(_text((label_width + WIDTH - 40) / 2, height - 8, unit, FONT + 1, "middle"))
    return _svg(title, height, "".join(out))
