"""A bot's rating over its games as inline SVG, drawn on the server (no script): the rating
as a line, its interval as a band, the games along the bottom."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from .names import isolated
from .standings import RatingStep

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """At most ``count`` + 1 round values from lo to hi, for the axis."""
    span = hi - lo
    if span <= 0:
        return [lo]
    base = 10 ** math.floor(math.log10(span / count))
    step = base * 10
    for m in (1, 2, 5):
        if span / (base * m) <= count:
            step = base * m
            break
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step + 1e-9) + 1)]


def rating_plot(bot: str, steps: Sequence[RatingStep]) -> str:
    """An SVG figure of ``steps`` (empty string when there are none)."""
    if not steps:
        return ""
    lo = min(s.low for s in steps)
    hi = max(s.high for s in steps)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    first, last = steps[0].game, steps[-1].game
    span = max(last - first, 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(game: int) -> float:
        return LEFT + plot_w * (game - first) / span if last > first else LEFT + plot_w / 2

    def y(value: float) -> float:
        return TOP + plot_h * (hi - value) / (hi - lo)

    line = " ".join(f"{x(s.game):.1f},{y(s.rating):.1f}" for s in steps)
    upper = [f"{x(s.game):.1f},{y(s.high):.1f}" for s in steps]
    lower = [f"{x(s.game):.1f},{y(s.low):.1f}" for s in reversed(steps)]
    parts = [
        f'<svg class="rating-plot" id="rating-plot" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="rating of {escape(isolated(bot))} over its games">',
        f'<rect class="plot-area" x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}"/>',
    ]
    for v in _ticks(lo, hi):
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(v):.1f}" '
            f'y2="{y(v):.1f}"/><text class="axis" x="{LEFT - 4}" y="{y(v) + 4:.1f}" '
            f'text-anchor="end">{v:g}</text>'
        )
    parts += [
        f'<polygon class="band" points="{" ".join(upper + lower)}"/>',
        f'<polyline class="rating" points="{line}"/>',
        f'<text class="axis" x="{LEFT}" y="{HEIGHT - 8}">game {first}</text>',
        f'<text class="axis" x="{LEFT + plot_w}" y="{HEIGHT - 8}" text-anchor="end">'
        f"game {last}</text>",
        "</svg>",
    ]
    return "".join(parts)
