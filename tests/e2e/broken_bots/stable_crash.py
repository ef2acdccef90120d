"""Broken bot (Python SDK): knows every piece but the stable, and crashes when a decision
leaves it nothing else."""

from __future__ import annotations

import argparse
import asyncio
import os
import random

from medina.engine import Action, ActionKind
from medina_client import Bot, Turn, play


class StableShy(Bot):
    """Plays a random legal action that is not a stable."""

    name = "stable-crash"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def choose(self, turn: Turn) -> Action:
        """Any legal action but a stable; none left is a crash."""
        others = [a for a in turn.legal if a.kind is not ActionKind.STABLE]
        if not others:
            raise RuntimeError("this bot does not know how to place a stable")
        return others[self.rng.randrange(len(others))]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument(
        "--token", default=os.environ.get("MEDINA_TOKEN"), required="MEDINA_TOKEN" not in os.environ
    )
    args = p.parse_args()
    asyncio.run(play(StableShy(), args.server, args.token))
