"""A ladder bot for no-show tests: it holds its lobby stream (the SDK's, echoing heartbeats)
but never opens the Play stream of a match it is assigned, printing ``assigned match ID,
connect deadline N ms`` for each. With ``--exit-when-assigned`` it exits (status 3) at its
first assignment instead, its lobby stream ending with the process.

    python noshowbot.py --server HOST:PORT --bot-key KEY [--exit-when-assigned]
"""

from __future__ import annotations

import argparse
import os

from medina.v1 import ladder_pb2
from medina_client.ladder import LadderOptions, run_ladder

#: The exit status of ``--exit-when-assigned``: neither the SDK's 0 (left) nor 1 (refused).
EXITED_WHEN_ASSIGNED = 3


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument("--bot-key", required=True)
    p.add_argument("--exit-when-assigned", action="store_true")
    args = p.parse_args()

    async def no_show(assigned: ladder_pb2.MatchAssigned) -> None:
        print(
            f"assigned match {assigned.match_id}, connect deadline "
            f"{assigned.config.connect_timeout_ms} ms",
            flush=True,
        )
        if args.exit_when_assigned:
            os._exit(EXITED_WHEN_ASSIGNED)  # at once, as a process that crashed: no Leave

    return run_ladder(no_show, args.server, args.bot_key, LadderOptions())


if __name__ == "__main__":
    raise SystemExit(main())
