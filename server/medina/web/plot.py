"""A bot's rating over its games as inline SVG, drawn on the server (no script): the rating
as a line, its interval as a band, the games along the bottom."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from .names import isolated
from .standings import RatingStep

#: The units of the nested SVG that holds the band and the line, stretched over the plot
#: area (whatever its size in pixels).
DATA = 1000


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
    """An SVG figure of ``steps`` (empty string when there are none).

    Drawn a unit a CSS pixel, as the score plot is (``plot.js``), but with no script: the
    SVG has no viewBox, its margins are its CSS padding (``viewer.css: .rating-plot``), the
    axis text is placed in percentages of the plot area, and only the band and the line
    are in a nested SVG stretched over that area. A viewBox scaling the whole figure to the
    window drew its text at 6 px on a phone."""
    if not steps:
        return ""
    lo = min(s.low for s in steps)
    hi = max(s.high for s in steps)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    first, last = steps[0].game, steps[-1].game
    span = max(last - first, 1)

    def x(game: int) -> float:
        return DATA * (game - first) / span if last > first else DATA / 2

    def y(value: float) -> float:
        return DATA * (hi - value) / (hi - lo)

    line = " ".join(f"{x(s.game):.1f},{y(s.rating):.1f}" for s in steps)
    upper = [f"{x(s.game):.1f},{y(s.high):.1f}" for s in steps]
    lower = [f"{x(s.game):.1f},{y(s.low):.1f}" for s in reversed(steps)]
    parts = [
        f'<svg class="rating-plot" id="rating-plot" role="img" '
        f'aria-label="rating of {escape(isolated(bot))} over its games">',
        '<rect class="plot-area" x="0" y="0" width="100%" height="100%"/>',
    ]
    for v in _ticks(lo, hi):
        at = f"{100 * y(v) / DATA:.2f}%"
        parts.append(
            f'<line class="grid" x1="0" x2="100%" y1="{at}" y2="{at}"/>'
            f'<text class="axis" x="-4" y="{at}" dy="4" text-anchor="end">{v:g}</text>'
        )
    parts += [
        f'<svg class="plot-data" width="100%" height="100%" viewBox="0 0 {DATA} {DATA}" '
        'preserveAspectRatio="none">',
        f'<polygon class="band" points="{" ".join(upper + lower)}"/>',
        f'<polyline class="rating" vector-effect="non-scaling-stroke" points="{line}"/>',
        "</svg>",
        f'<text class="axis" x="0" y="100%" dy="18">game {first}</text>',
        f'<text class="axis" x="100%" y="100%" dy="18" text-anchor="end">game {last}</text>',
        "</svg>",
    ]
    return "".join(parts)
