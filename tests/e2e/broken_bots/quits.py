"""Broken bot (Python SDK): plays its first three decisions, then its process exits with
status 3 in the middle of the match."""

from __future__ import annotations

import argparse
import asyncio
import os

from medina.engine import Action
from medina_client import Bot, Turn, play


class Quitter(Bot):
    """Plays the first legal action three times, then exits the process."""

    name = "quits"

    def __init__(self) -> None:
        self.decisions = 0

    def choose(self, turn: Turn) -> Action:
        """The first legal action; the fourth decision ends the process."""
        self.decisions += 1
        if self.decisions > 3:
            os._exit(3)  # no clean shutdown: as a crash looks from outside
        return turn.legal[0]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    args = p.parse_args()
    asyncio.run(play(Quitter(), args.server, os.environ["MEDINA_TOKEN"]))
