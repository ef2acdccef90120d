"""Broken bot: plays correctly, but when its stream is dropped it never reconnects."""

from __future__ import annotations

import asyncio
import sys

from .common import Knobs, play

if __name__ == "__main__":
    sys.exit(asyncio.run(play(Knobs(reconnect=False))))
