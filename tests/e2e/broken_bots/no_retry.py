"""Broken bot: answers every request once, and never again after a rejection."""

from __future__ import annotations

import asyncio
import sys

from .common import Knobs, play

if __name__ == "__main__":
    sys.exit(asyncio.run(play(Knobs(retry=False))))
