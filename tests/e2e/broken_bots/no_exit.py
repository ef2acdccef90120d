"""Broken bot (Python SDK): plays a whole match correctly, then never exits."""

from __future__ import annotations

import argparse
import asyncio

from medina_client import play
from medina_client.bots import RandomBot


async def main(server: str, token: str) -> None:
    await play(RandomBot(0), server, token)
    await asyncio.Event().wait()  # the match is over, but the process lingers


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument("--token", required=True)
    args = p.parse_args()
    asyncio.run(main(args.server, args.token))
