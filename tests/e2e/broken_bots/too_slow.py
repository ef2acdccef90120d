"""Broken bot (Python SDK): blocks in ``choose`` longer than its clock, every time, until the
clock forfeits its seat; it prints the result ``play`` returns (or the error it raised)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from medina.engine import Action
from medina_client import Bot, Turn, play


class TooSlow(Bot):
    """The first legal action, after blocking ``SLOW_S``: past a 300 ms clock and its grace."""

    name = "too-slow"
    SLOW_S = 1.0

    def choose(self, turn: Turn) -> Action:
        """The first legal action, late."""
        time.sleep(self.SLOW_S)  # blocking the loop, as a bot that searches does
        return turn.legal[0]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    args = p.parse_args()
    try:
        result = asyncio.run(play(TooSlow(), args.server, os.environ["MEDINA_TOKEN"]))
    except Exception as exc:  # the test reads what the bot got
        print(f"too_slow: play raised {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        sys.exit(4)
    print(f"too_slow: result of {len(result.seats)} seats", file=sys.stderr, flush=True)
