"""Broken bot: connects and listens, but never answers a request."""

from __future__ import annotations

import asyncio
import sys

from .common import Knobs, play

if __name__ == "__main__":
    sys.exit(asyncio.run(play(Knobs(answer=False))))
