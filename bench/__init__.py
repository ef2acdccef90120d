"""Benchmarks run by ``make bench`` (``python -m bench``).

Each section is a module of this package with a ``main() -> None`` that prints its own
table; ``bench/__main__.py`` lists the sections and runs them in order. Options reach the
sections through environment variables so that every section reads them the same way:

``MEDINA_BENCH_QUICK=1``
    fewer games / iterations (``python -m bench --quick`` sets it).
``MEDINA_BENCH_GAMES=N``
    games per configuration for sections that play games (``--games N`` sets it).
``MEDINA_BENCH_SOAK=N``
    the capacity section plays N matches and reports RSS instead (``--soak N`` sets it).
"""

from __future__ import annotations

import os

QUICK_ENV = "MEDINA_BENCH_QUICK"
GAMES_ENV = "MEDINA_BENCH_GAMES"
SOAK_ENV = "MEDINA_BENCH_SOAK"


def quick() -> bool:
    """Whether the quick (reduced) mode is on."""
    return os.environ.get(QUICK_ENV, "").strip().lower() not in ("", "0", "false", "no")


def games(default: int, quick_default: int) -> int:
    """Games per configuration: ``MEDINA_BENCH_GAMES`` if set, else the (quick) default."""
    raw = os.environ.get(GAMES_ENV, "").strip()
    if raw:
        n = int(raw)
        if n < 1:
            raise ValueError(f"{GAMES_ENV} must be at least 1, got {n}")
        return n
    return quick_default if quick() else default
