"""Broken bot (Python SDK): plays a whole match correctly, then never exits."""

from __future__ import annotations

import argparse
import asyncio
import os

from medina_client import play
from medina_client.bots import RandomBot


async def main(server: str, token: str) -> None:
    await play(RandomBot(0), server, token)
    await asyncio.Event().wait()  # the match is over, but the process lingers


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument(
        "--token", default=os.environ.get("MEDINA_TOKEN"), required="MEDINA_TOKEN" not in os.environ
    )
    args = p.parse_args()
    asyncio.run(main(args.server, args.token))
