"""The review metrics' shapes: `e2g metrics --json`/`--csv` and /api/v1/metrics
(`metric_json`, keys fixed by issue 36: keep them), and the charts of `e2g metrics
--svg` and /metrics (`metrics_svg`), drawn as /stats.svg is: plain SVG a person reads
without scripts, every label escaped.

A chart is one panel per metric (and unit): a time series when the rows are by
period and not grouped (the median with the band from the 25th to the 75th
percentile for durations, the value for ratios), else bars, one per group. Each
point or bar may link somewhere (`link`: the web's patches behind it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from e2g.api.metrics import MetricRow

DURATION_KEYS = ("median", "p25", "p75", "unit", "total")
RATIO_KEYS = ("numerator", "denominator", "value")
CSV_KEYS = (
    "metric",
    "period",
    "group",
    "n",
    *DURATION_KEYS,
    *RATIO_KEYS,
    "p95",
    "other_domain",
)
WIDTH, LEFT, BAR, GAP = 760, 200, 16, 5
Link = Callable[["MetricRow"], str | None]


def _rounded(value: float | None, places: int = 2) -> float | None:
    return None if value is None else round(value, places)


def metric_json(row: MetricRow) -> dict[str, object]:
    """One metric for one period and group: `metric`, `period`, `group`, `n`, and
    for a duration `median`, `p25`, `p75`, `unit`, `total` (reviewer-load: `p95`
    too), for a ratio `numerator`, `denominator`, `value` (reviewed-share:
    `other_domain` and `other_domain_value` too)."""
    found: dict[str, object] = {
        "metric": row.metric,
        "period": row.period,
        "group": row.group,
        "n": row.n,
    }
    if row.ratio:
        found |= {
            "numerator": row.numerator,
            "denominator": row.denominator,
            "value": _rounded(row.value, 4),
        }
        if row.other_domain is not None:
            found["other_domain"] = row.other_domain
            found["other_domain_value"] = (
                round(row.other_domain / row.denominator, 4)
                if row.denominator
                else None
            )
        return found
    found |= {
        "median": _rounded(row.median),
        "p25": _rounded(row.p25),
        "p75": _rounded(row.p75),
        "unit": row.unit,
        "total": row.total,
    }
    if row.p95 is not None:
        found["p95"] = _rounded(row.p95)
    return found


def metric_csv(row: MetricRow) -> list[str]:
    """A CSV line of CSV_KEYS ("" where the row has no such value)."""
    data = metric_json(row)
    return ["" if data.get(key) is None else str(data[key]) for key in CSV_KEYS]


def metric_text(row: MetricRow) -> str:
    """The figure a table cell shows: "12.5 h (4.1-30.2)", "42/97 (43%)"."""
    if row.ratio:
        if row.metric == "absence-factor":
            return (
                f"{row.value or 0:.0f} of {row.n} ({row.numerator}/{row.denominator})"
            )
        share = f" ({row.value:.0%})" if row.value is not None else ""
        return f"{row.numerator}/{row.denominator}{share}"
    if row.median is None:
        return f"- (0 of {row.total})"
    unit = {"hours": "h", "days": "d"}.get(row.unit, "")
    return (
        f"{row.median:.1f}{unit} ({row.p25 or 0:.1f}-{row.p75 or 0:.1f}) "
        f"n={row.n}/{row.total}"
    )


def panels(rows: Sequence[MetricRow]) -> list[tuple[str, list[MetricRow]]]:
    """The rows by chart: one per metric and unit, in the rows' order."""
    found: dict[str, list[MetricRow]] = {}
    for row in rows:
        title = row.metric + (f" ({row.unit})" if row.unit else "")
        found.setdefault(title, []).append(row)
    return list(found.items())


def metrics_svg(rows: Sequence[MetricRow], *, link: Link | None = None) -> str:
    """Every panel of `rows`, one below the other, as one SVG document."""
    parts: list[str] = []
    top = 0
    for title, kept in panels(rows):
        body, height = panel(title, kept, link=link, top=top)
        parts.append(body)
        top += height
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{max(top, 40)}" viewBox="0 0 {WIDTH} {max(top, 40)}" '
        'font-family="sans-serif" font-size="12">'
    )
    if not parts:
        parts.append(
            '<text x="10" y="24">no patches in the queue for this choice</text>'
        )
    return "\n".join([head, *parts, "</svg>"]) + "\n"


def panel_svg(title: str, rows: list[MetricRow], *, link: Link | None = None) -> str:
    """One panel as an SVG document of its own (the web page shows each inline)."""
    body, height = panel(title, rows, link=link)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12" '
        f'role="img" aria-label="{_attribute(title)}">\n{body}\n</svg>\n'
    )


def _attribute(text: str) -> str:
    from html import escape

    return escape(text)


def panel(
    title: str, rows: list[MetricRow], *, link: Link | None = None, top: int = 0
) -> tuple[str, int]:
    """One chart (a group of SVG elements at `top`) and its height."""
    series = len({row.period for row in rows}) > 1 and all(
        row.group is None for row in rows
    )
    if series:
        return _series(title, rows, link=link, top=top)
    return _bars(title, rows, link=link, top=top)


def _figure(row: MetricRow) -> float | None:
    return row.value if row.ratio else row.median


def _anchor(element: str, row: MetricRow, link: Link | None) -> str:
    from html import escape

    href = link(row) if link is not None else None
    tip = f"<title>{escape(_label(row))}: {escape(metric_text(row))}</title>"
    if not href:
        return f"<g>{tip}{element}</g>"
    return f'<a href="{escape(href)}">{tip}{element}</a>'


def _label(row: MetricRow) -> str:
    return " ".join(part for part in (row.period, row.group) if part) or "all"


def _bars(
    title: str, rows: list[MetricRow], *, link: Link | None, top: int
) -> tuple[str, int]:
    from html import escape

    shown = sorted(rows, key=lambda row: -row.n)[:40] if rows[0].group else rows[:40]
    height = 44 + len(shown) * (BAR + GAP)
    most = max((_figure(row) or 0 for row in shown), default=0) or 1
    scale = (WIDTH - LEFT - 190) / most
    parts = [f'<text x="10" y="{top + 20}" font-size="14">{escape(title)}</text>']
    for index, row in enumerate(shown):
        y = top + 32 + index * (BAR + GAP)
        length = (_figure(row) or 0) * scale
        bar = (
            f'<rect x="{LEFT}" y="{y}" width="{length:.1f}" height="{BAR}" '
            'fill="#5e81ac"/>'
        )
        if not row.ratio and row.p25 is not None and row.p75 is not None:
            bar += (
                f'<line x1="{LEFT + row.p25 * scale:.1f}" y1="{y + BAR / 2}" '
                f'x2="{LEFT + row.p75 * scale:.1f}" y2="{y + BAR / 2}" '
                'stroke="#2e3440" stroke-width="2"/>'
            )
        parts += [
            f'<text x="{LEFT - 6}" y="{y + 12}" text-anchor="end">'
            f"{escape(_label(row)[:30])}</text>",
            _anchor(bar, row, link),
            f'<text x="{LEFT + max(length, 0) + 6:.1f}" y="{y + 12}">'
            f"{escape(metric_text(row))}</text>",
        ]
    return "\n".join(parts), height


def _series(
    title: str, rows: list[MetricRow], *, link: Link | None, top: int
) -> tuple[str, int]:
    """A time series: periods left to right, the median (or value) as a line,
    the interquartile band behind it."""
    from html import escape

    height, plot_top, plot_height, left, right = 220, top + 30, 150, 60, WIDTH - 20
    rows = sorted(rows, key=lambda row: row.period or "")
    highs = [
        (row.value if row.ratio else (row.p75 if row.p75 is not None else row.median))
        for row in rows
    ]
    most = max((high for high in highs if high is not None), default=0) or 1
    step = (right - left) / max(1, len(rows) - 1)

    def x(index: int) -> float:
        return left + index * step

    def y(value: float) -> float:
        return plot_top + plot_height - value / most * plot_height

    parts = [
        f'<text x="10" y="{top + 20}" font-size="14">{escape(title)}</text>',
        f'<line x1="{left}" y1="{y(0):.1f}" x2="{right}" y2="{y(0):.1f}" '
        'stroke="#999"/>',
        f'<text x="{left - 6}" y="{y(most) + 4:.1f}" text-anchor="end">'
        f"{most:.3g}</text>",
        f'<text x="{left - 6}" y="{y(0) + 4:.1f}" text-anchor="end">0</text>',
    ]
    band = [
        (x(i), row.p25, row.p75)
        for i, row in enumerate(rows)
        if row.p25 is not None and row.p75 is not None
    ]
    if len(band) > 1:
        upper = " ".join(f"{bx:.1f},{y(high):.1f}" for bx, _, high in band)
        lower = " ".join(f"{bx:.1f},{y(low):.1f}" for bx, low, _ in reversed(band))
        parts.append(f'<polygon points="{upper} {lower}" fill="#d8dee9"/>')
    line = [(x(i), _figure(row)) for i, row in enumerate(rows)]
    points = " ".join(f"{px:.1f},{y(v):.1f}" for px, v in line if v is not None)
    parts.append(
        f'<polyline points="{points}" fill="none" stroke="#5e81ac" stroke-width="2"/>'
    )
    every = max(1, len(rows) // 12)
    for index, row in enumerate(rows):
        value = _figure(row)
        if value is not None:
            dot = f'<circle cx="{x(index):.1f}" cy="{y(value):.1f}" r="4" fill="#5e81ac"/>'
            parts.append(_anchor(dot, row, link))
        if index % every == 0:
            parts.append(
                f'<text x="{x(index):.1f}" y="{plot_top + plot_height + 16}" '
                f'text-anchor="middle">{escape(row.period or "")}</text>'
            )
    return "\n".join(parts), height
