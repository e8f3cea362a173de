"""The reports' SVG charts (reports/charts.py): scales, ticks, gaps, stacking and legends, read
back from the markup."""

import datetime as dt
import re

import pandas
import pytest

from dagster_project.reports.charts import (
    PLOT_HEIGHT,
    WIDTH,
    Line,
    bar_chart,
    line_chart,
    nice_ticks,
)


def _paths(svg: str) -> list[list[tuple[str, float, float]]]:
    """Every path's commands as (command, x, y), in document order."""
    return [
        [(c, float(x), float(y)) for c, x, y in re.findall(r"([ML])([-\d.]+) ([-\d.]+)", d)]
        for d in re.findall(r'<path d="([^"]+)"', svg)
    ]


def _labels(svg: str) -> list[str]:
    return re.findall(r"<text [^>]*>([^<]*)</text>", svg)


@pytest.mark.parametrize(
    ("low", "high", "ticks"),
    [
        (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (0, 1.05, [0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2]),
        (2.6, 5.3, [2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5]),
        (0, 1_017, [0, 200, 400, 600, 800, 1000, 1200]),
        (-0.3, 0.25, [-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3]),
        (5, 5, [4.4, 4.6, 4.8, 5.0, 5.2, 5.4, 5.6]),  # one value: a tenth each way
    ],
)
def test_ticks_are_round_and_cover_the_data(low, high, ticks):
    first, last, found, _decimals = nice_ticks(low, high)
    assert found == pytest.approx(ticks)
    assert first <= low and last >= high and len(found) <= 7


def test_points_land_where_their_values_are():
    line = Line("pool", [0, 10, 20], [0.0, 50.0, 100.0])
    svg = line_chart([line], alt="a line", x_label="month", y_label="%", legend=False)
    assert svg.startswith("<svg ") and f'viewBox="0 0 {WIDTH} ' in svg
    (points,) = [p for p in _paths(svg) if len(p) == 3]
    (_, x0, y0), (_, x1, y1), (_, x2, y2) = points
    assert x1 - x0 == pytest.approx(x2 - x1, abs=0.2)  # equal steps along x
    assert y0 - y1 == pytest.approx(y1 - y2, abs=0.2) and y0 > y1 > y2  # up is smaller y
    labels = _labels(svg)
    assert {"0", "20", "40", "60", "80", "100"} <= set(labels)  # y ticks
    assert {"month", "%"} <= set(labels) and "a line" in svg  # axis labels, accessible name


def test_a_missing_value_breaks_the_line():
    line = Line("rate", [1, 2, 3, 4, 5], [1.0, 2.0, None, float("nan"), 3.0])
    svg = line_chart([line], alt="gaps", legend=False)
    (commands,) = [p for p in _paths(svg) if len(p) == 3]
    assert [c for c, _x, _y in commands] == ["M", "L", "M"]  # two pieces: 1-2, then 5
    assert svg.count("<circle ") == 1  # the lone point (5): a dot


def test_dates_get_month_or_year_ticks():
    months = [dt.date(2016, m, 15) for m in range(1, 13)]
    short = _labels(line_chart([Line("a", months, list(range(12)))], alt="x", legend=False))
    assert "2016-03" in short and "2016-11" in short  # every other month, inside the data
    assert "2016-01" not in short and "2016-02" not in short
    years = [dt.date(2015 + y, 6, 15) for y in range(6)]
    long = _labels(line_chart([Line("a", years, list(range(6)))], alt="x", legend=False))
    assert {"2016", "2017", "2020"} <= set(long) and not any("-" in t for t in long if t[:1] == "2")


def test_areas_stack_and_the_legend_names_every_series():
    dates = [dt.date(2016, m, 15) for m in range(1, 4)]
    areas = [Line("A-1", dates, [10.0, 5.0, 0.0]), Line("A-2", dates, [20.0, 20.0, 20.0])]
    total = Line("Pool Balance", dates, [30.0, 25.0, 20.0], colour="#000")
    svg = line_chart([total], areas=areas, alt="paydown", y_floor=0)
    fills = re.findall(r'<path d="([^"]+)Z" fill="', svg)
    assert len(fills) == 2
    top_of_a2 = [(float(x), float(y)) for x, y in re.findall(r"[ML]([-\d.]+) ([-\d.]+)", fills[1])]
    line = [(x, y) for _c, x, y in _paths(svg)[-1]]
    assert top_of_a2[:3] == line  # A-2 is stacked on A-1: its top is the sum, the Pool Balance
    assert {"A-1", "A-2", "Pool Balance"} <= set(_labels(svg))


def test_a_right_axis_has_its_own_scale():
    dates = [dt.date(2016, m, 15) for m in range(1, 5)]
    speeds = [
        Line("ABS", dates, [1.1, 1.2, 1.3, 1.2]),
        Line("CPR", dates, [14, 16, 18, 20], right=True),
    ]
    svg = line_chart(speeds, alt="speeds", y_label="ABS %", right_label="CPR %")
    labels = _labels(svg)
    assert "1.30" in labels or "1.3" in labels
    assert "20" in labels and "CPR %" in labels
    abs_line, cpr_line = (p for p in _paths(svg) if len(p) == 4)
    assert min(y for *_, y in cpr_line) == pytest.approx(min(y for *_, y in abs_line), abs=40)


def test_the_same_data_gives_the_same_bytes():
    line = Line("pool", [dt.date(2016, 1, 15), dt.date(2016, 2, 15)], [1.0, 2.0])
    assert line_chart([line], alt="a") == line_chart([line], alt="a")


def test_bars_are_as_long_as_their_counts():
    assert nice_ticks(0, 2, whole=True)[2] == [0, 1, 2]  # counts: no half receivables
    svg = bar_chart({"2.3(a)": 10, "2.3(b) a longer label": 5}, "Receivables breaching")
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)" height="18"', svg)]
    assert widths[0] == pytest.approx(2 * widths[1], rel=1e-3)
    assert {"2.3(a)", "2.3(b) a longer label", "10", "5", "receivables"} <= set(_labels(svg))


def test_one_date_or_no_values_still_draw_axes():
    one = line_chart([Line("a", [dt.date(2016, 3, 15)], [1.0])], alt="one date", legend=False)
    assert "2016-03" in _labels(one)  # the x axis names the date it holds
    empty = line_chart([Line("a", [dt.date(2016, 3, 15)], [None])], alt="none", legend=False)
    assert empty.startswith("<svg ") and "0" in _labels(empty)


def _height(svg: str) -> float:
    return float(re.search(r'viewBox="0 0 \d+ (\d+)"', svg).group(1))


def _frame_height(svg: str) -> float:
    (height,) = re.findall(r'<rect [^>]*height="([\d.]+)" fill="none" stroke="#333"', svg)
    return float(height)


def test_a_long_legend_makes_the_chart_taller_not_the_plot_smaller():
    def chart(trusts: int) -> str:
        lines = [Line(f"Sample trust {n} (shaped like CarMax Auto Owner Trust 2015-4)", [1, 2],
                      [1.0, 2.0]) for n in range(trusts)]  # fmt: skip
        return line_chart(lines, alt="shelf")

    few, many = chart(2), chart(20)
    assert _frame_height(few) == _frame_height(many) == PLOT_HEIGHT
    assert _height(many) > _height(few) + 8 * 17  # ten rows of two columns, against one row
    assert all(f"Sample trust {n} " in many for n in range(20))


def test_labels_have_the_decimals_of_their_step_and_counts_are_whole():
    assert nice_ticks(0, 150)[2:] == ([0, 25, 50, 75, 100, 125, 150], 0)
    assert nice_ticks(0, 1.5)[3] == 2  # 0.25 steps
    assert nice_ticks(0, 13, whole=True)[2] == [0, 5, 10, 15]  # never 2.5 receivables


def test_what_cannot_be_drawn_is_left_out():
    dates = [dt.date(2016, m, 15) for m in range(1, 4)]
    lines = [
        Line("left", dates, [1.0, float("inf"), pandas.NA]),
        Line("right", dates, [None, None, None], right=True),  # nothing to draw on its axis
    ]
    svg = line_chart(lines, alt="gaps", right_label="CPR %")
    assert svg.startswith("<svg ") and "CPR %" in _labels(svg)


def test_a_long_bar_label_is_cut_and_keeps_its_text_as_a_tooltip():
    label = "2.3(zz) " + "a representation with a very long title " * 5
    svg = bar_chart({label: 3, "2.3(a)": 1}, "breaches")
    assert f"<title>{label}</title>" in svg
    (shown,) = re.findall(r"</title>([^<]*)</text>", svg)
    assert shown.endswith("\u2026") and label.startswith(shown[:-1]) and len(shown) < len(label)
