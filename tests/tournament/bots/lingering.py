"""A random bot (Python SDK) whose process stays a while after its match ended (LINGER_S
seconds), as a bot that flushes logs or saves state on the way out does; THINK_S: seconds
it takes over each decision (none by default); PID_DIR: where it writes a file named for
its process id once its match has ended (it lingers from then on); FREEZE set: it lingers
stopped (SIGSTOP), as a bot frozen by another is."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import time
from pathlib import Path

from medina.engine import Action
from medina_client import Bot, Turn, play


class Random(Bot):
    """A seeded random legal action."""

    name = "lingering"

    def __init__(self) -> None:
        self.rng = random.Random(7)

    def choose(self, turn: Turn) -> Action:
        """Any legal action."""
        time.sleep(float(os.environ.get("THINK_S", "0")))
        return turn.legal[self.rng.randrange(len(turn.legal))]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    args = p.parse_args()
    asyncio.run(play(Random(), args.server, os.environ["MEDINA_TOKEN"]))
    if "PID_DIR" in os.environ:
        (Path(os.environ["PID_DIR"]) / str(os.getpid())).touch()
    if os.environ.get("FREEZE"):
        os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(float(os.environ.get("LINGER_S", "5")))
