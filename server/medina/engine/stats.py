"""The statistics results are read with: the 95 % Wilson interval of a win share.

Here, in the standard-library-only engine, because every side reads results this way: the
tournament standings (medina-arena), the strength bench, and the learning environments'
example (medina-client, which ships the engine but not the arena).
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["Z95", "wilson"]

#: 95 % two-sided normal quantile.
Z95: Final = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval (95 % with the default ``z``) of a proportion:
    ``successes`` of ``n`` (fractional where a draw or a shared first counts as its share);
    (0, 1) for no trials. Always within 0..1, and at a share of 0 or 1 the bound is the
    edge itself (computed, rounding put it a hair off: a report read "-0.00")."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At a share of 0 (1) the bound is 0 (1) exactly; computed, rounding moves it a hair.
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return low, high
