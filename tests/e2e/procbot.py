"""A bot process for fault tests: the SDK's random bot, printing ``request N`` as each decision
request arrives so a test can kill or freeze it at a known point.

    python procbot.py --server HOST:PORT --token T [--hang-at N]

``--hang-at N``: on the N-th request, print and then hang (busy in ``choose``) instead of
answering: the process can then be killed mid-turn.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from medina.engine import Action
from medina_client import play
from medina_client.bot import Turn
from medina_client.bots import RandomBot
from medina_client.errors import MedinaClientError


class LoudBot(RandomBot):
    """Announces each request on stdout."""

    def __init__(self, seed: int, hang_at: int) -> None:
        super().__init__(seed)
        self.count = 0
        self.hang_at = hang_at

    def choose(self, turn: Turn) -> Action:
        self.count += 1
        print(f"request {self.count}", flush=True)
        if self.count == self.hang_at:
            time.sleep(3600)  # busy for good: the test kills or stops us
        return super().choose(turn)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument(
        "--token", default=os.environ.get("MEDINA_TOKEN"), required="MEDINA_TOKEN" not in os.environ
    )
    p.add_argument("--hang-at", type=int, default=0)
    args = p.parse_args()
    try:
        result = asyncio.run(
            play(LoudBot(1, args.hang_at), args.server, args.token, reconnect_for_s=5.0)
        )
    except MedinaClientError as exc:
        print(f"ended: {exc}", flush=True)
        return 1
    print(f"ended: {len(result.seats)} seats", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
