"""Charts as inline SVG, drawn on the server: no script, no CDN, nothing the console's CSP
would refuse.

A chart is a `<figure>` holding an `<svg role="img">` whose `aria-label` and `<title>` state
its figures in words (latest, peak, total), a legend, and the marks. Colours are never
written into the SVG: every mark carries a class (`s-<series>`, `bar-<name>`) that
console.css paints from its variables, so the light and dark palettes both apply. Each line
also carries its values in `data-values` (one per minute, `-` for a minute without any), so
a test, or a reader of the page's source, sees the numbers the marks were drawn from.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = [
    "Bar",
    "Series",
    "bar_chart",
    "count",
    "dollars",
    "line_chart",
    "seconds",
]

Format = Callable[[float], str]

_WIDTH = 600
_HEIGHT = 140
_LEFT = 52
_RIGHT = 8
_TOP = 8
_BOTTOM = 20


def count(value: float) -> str:
    """12, 1.2k, 3.4M."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def seconds(value: float) -> str:
    """0.8 ms, 12 ms, 1.5 s, 2 min."""
    if not value:
        return "0"
    if value >= 120:
        return f"{value / 60:.0f} min"
    if value >= 1:
        return f"{value:.1f} s"
    if value >= 0.01:
        return f"{value * 1000:.0f} ms"
    return f"{value * 1000:.1f} ms"


def dollars(value: float) -> str:
    """$0.0012, $0.12, $12.00."""
    if value and value < 0.01:
        return f"${value:.4f}"
    return f"${value:.2f}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """One line of a chart.

    Attributes:
        name: what the legend and the description call it.
        key: its class (`s-<key>`), which gives its colour.
        values: one per minute, oldest first; None where there is nothing to draw.
        total: whether the description gives its sum (counts, not latencies).
    """

    name: str
    key: str
    values: Sequence[float | None]
    total: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Bar:
    """One bar of a bar chart: its label, its value, its class (`bar-<key>`)."""

    label: str
    key: str
    value: float


def _ceiling(peak: float) -> float:
    """The axis' top: 1, 2 or 5 times a power of ten, at or above `peak`."""
    if peak <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(peak))
    for step in (1, 2, 5, 10):
        if step * power >= peak * (1 - 1e-9):
            return step * power
    return 10 * power


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _describe(series: Series, fmt: Format) -> str:
    present = [value for value in series.values if value is not None]
    if not present or not any(present):
        return f"{series.name}: none"
    latest = series.values[-1]
    words = [
        f"{series.name}: latest {fmt(latest) if latest is not None else 'none'}",
        f"peak {fmt(max(present))}",
    ]
    if series.total:
        words.append(f"total {fmt(sum(present))}")
    return ", ".join(words)


def _legend(series: Sequence[Series]) -> str:
    return "".join(
        f'<li><span class="swatch s-{escape(line.key)}"></span>{escape(line.name)}</li>'
        for line in series
    )


def line_chart(
    title: str,
    series: Sequence[Series],
    *,
    fmt: Format = count,
    span: str = "the last 60 minutes",
    area: bool = False,
    small: bool = False,
) -> Markup:
    """A line chart of `series` over equal steps (a minute each), the latest at the right.

    Args:
        title: what the chart shows, e.g. "Requests per minute".
        series: the lines, drawn in order (the first is filled when `area`).
        fmt: how a value reads on the axis and in the description.
        span: the time the x axis covers, in words.
        area: fill under the first line.
        small: the smaller size of a chart among many (per partner).
    """
    width, height = (_WIDTH // 2, _HEIGHT) if small else (_WIDTH, _HEIGHT)
    plot_w = width - _LEFT - _RIGHT
    plot_h = height - _TOP - _BOTTOM
    steps = max((len(line.values) for line in series), default=0)
    peak = max(
        (value for line in series for value in line.values if value is not None), default=0.0
    )
    top = _ceiling(peak)
    figures = "; ".join(_describe(line, fmt) for line in series)
    label = f"{title}, {span}. {figures}."

    def x(index: int) -> float:
        return _LEFT + (plot_w * index / (steps - 1) if steps > 1 else plot_w)

    def y(value: float) -> float:
        return _TOP + plot_h * (1 - value / top)

    marks: list[str] = []
    for fraction in (0.0, 0.5, 1.0):
        level = y(top * fraction)
        marks.append(
            f'<line class="grid" x1="{_LEFT}" y1="{level:.1f}" x2="{width - _RIGHT}" '
            f'y2="{level:.1f}"></line>'
            f'<text class="axis" x="{_LEFT - 4}" y="{level + 4:.1f}" text-anchor="end">'
            f"{escape(fmt(top * fraction))}</text>"
        )
    baseline = height - _BOTTOM
    marks.append(
        f'<text class="axis" x="{_LEFT}" y="{baseline + 14}" text-anchor="start">'
        f"{escape(_ago(steps))}</text>"
        f'<text class="axis" x="{width - _RIGHT}" y="{baseline + 14}" text-anchor="end">now</text>'
    )
    for place, line in enumerate(series):
        runs = _runs(line.values)
        values = " ".join("-" if value is None else _number(value) for value in line.values)
        key = escape(line.key)
        if area and place == 0:
            for run in runs:
                first, last = run[0][0], run[-1][0]
                outline = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in run)
                marks.append(
                    f'<polygon class="area s-{key}" points="{x(first):.1f},{baseline} '
                    f'{outline} {x(last):.1f},{baseline}"></polygon>'
                )
        paths = " ".join("M" + " L".join(f"{x(i):.1f},{y(v):.1f}" for i, v in run) for run in runs)
        dots = "".join(
            f'<circle class="dot s-{key}" cx="{x(i):.1f}" cy="{y(v):.1f}" r="2"></circle>'
            for run in runs
            if len(run) == 1
            for i, v in run
        )
        marks.append(
            f'<path class="line s-{key}" data-series="{key}" data-values="{values}" '
            f'd="{paths}"></path>{dots}'
        )
    size = "chart small" if small else "chart"
    return Markup(
        f'<figure class="{size}"><figcaption>{escape(title)}'
        f'<ul class="legend">{_legend(series)}</ul></figcaption>'
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>{''.join(marks)}</svg></figure>"
    )


def _ago(steps: int) -> str:
    return f"{steps - 1} min ago" if steps > 1 else "now"


def _runs(values: Sequence[float | None]) -> list[list[tuple[int, float]]]:
    """The stretches of consecutive values that are there (a line breaks at a gap)."""
    runs: list[list[tuple[int, float]]] = []
    current: list[tuple[int, float]] = []
    for index, value in enumerate(values):
        if value is None:
            if current:
                runs.append(current)
                current = []
            continue
        current.append((index, value))
    if current:
        runs.append(current)
    return runs


def bar_chart(title: str, bars: Sequence[Bar], *, fmt: Format = count) -> Markup:
    """Horizontal bars, one per row, labelled with their value (live tasks by state)."""
    row = 22
    label_w = 120
    value_w = 48
    width = _WIDTH
    height = max(row * len(bars), row) + 4
    plot_w = width - label_w - value_w
    top = max((bar.value for bar in bars), default=0.0) or 1.0
    label = f"{title}: " + ", ".join(f"{bar.label} {fmt(bar.value)}" for bar in bars) + "."
    marks = []
    for place, bar in enumerate(bars):
        y = 2 + place * row
        length = plot_w * bar.value / top
        marks.append(
            f'<text class="axis" x="{label_w - 6}" y="{y + 15}" text-anchor="end">'
            f"{escape(bar.label)}</text>"
            f'<rect class="bar bar-{escape(bar.key)}" data-label="{escape(bar.label)}" '
            f'data-value="{_number(bar.value)}" x="{label_w}" y="{y + 3}" '
            f'width="{length:.1f}" height="{row - 6}"></rect>'
            f'<text class="axis value" x="{label_w + length + 4:.1f}" y="{y + 15}">'
            f"{escape(fmt(bar.value))}</text>"
        )
    return Markup(
        f'<figure class="chart bars"><figcaption>{escape(title)}</figcaption>'
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>{''.join(marks)}</svg></figure>"
    )
