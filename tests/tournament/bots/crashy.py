"""A broken bot (Python SDK): plays random legal actions, then its process dies with status 3
at its decision number CRASH_AT (default 6) -- in every game."""

from __future__ import annotations

import argparse
import asyncio
import os
import random

from medina.engine import Action
from medina_client import Bot, Turn, play


class Crashy(Bot):
    """Random until the CRASH_AT-th decision, which ends the process."""

    name = "crashy"

    def __init__(self, crash_at: int) -> None:
        self.crash_at = crash_at
        self.decisions = 0
        self.rng = random.Random(7)

    def choose(self, turn: Turn) -> Action:
        """A random legal action, or the crash."""
        self.decisions += 1
        if self.decisions >= self.crash_at:
            os._exit(3)  # no clean shutdown: as a crash looks from outside
        return turn.legal[self.rng.randrange(len(turn.legal))]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    args = p.parse_args()
    asyncio.run(
        play(Crashy(int(os.environ.get("CRASH_AT", "6"))), args.server, os.environ["MEDINA_TOKEN"])
    )
