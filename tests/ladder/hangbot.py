"""A ladder bot for fault tests: the SDK's random bot, which once the file ``--hang-when``
exists prints ``hanging in a match`` at its next request early in a match and then hangs, so
a test can kill it at a known point mid-match: early, so that the rest of the match still
needs the seat (a kill at a match's last request costs one strike and no forfeit, the match
ending within the seat's reconnect grace).

    python hangbot.py --server HOST:PORT --bot-key KEY --hang-when FILE
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from medina.engine import Action
from medina_client.bot import Turn
from medina_client.bots import RandomBot
from medina_client.ladder import LadderOptions, run_ladder, seat_player

#: The requests of a match (ids count from 1) at which the bot may hang.
EARLY = 20


class HangBot(RandomBot):
    """Hangs at its first request among a match's first ``EARLY`` once ``trigger`` exists."""

    def __init__(self, trigger: Path) -> None:
        super().__init__(1)
        self.trigger = trigger

    def choose(self, turn: Turn) -> Action:
        if turn.request_id <= EARLY and self.trigger.exists():
            print("hanging in a match", flush=True)
            time.sleep(3600)  # busy for good: the test kills us
        return super().choose(turn)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument("--bot-key", required=True)
    p.add_argument("--name", default="hangbot")
    p.add_argument("--hang-when", type=Path, required=True)
    args = p.parse_args()

    def make() -> HangBot:
        bot = HangBot(args.hang_when)
        bot.name = args.name
        return bot

    return run_ladder(seat_player(make), args.server, args.bot_key, LadderOptions())


if __name__ == "__main__":
    raise SystemExit(main())
