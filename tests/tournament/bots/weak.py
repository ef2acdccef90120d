"""A deliberately weak bot (Python SDK): it plays the action that raises its score least, so
it should finish behind random play."""

from __future__ import annotations

import argparse
import asyncio
import os

from medina.engine import Action, ActionKind, apply_action, result
from medina_client import Bot, Turn, play


class Weak(Bot):
    """The legal action with the lowest immediate score gain (first of equals)."""

    name = "weak"

    def choose(self, turn: Turn) -> Action:
        """The worst action by the greedy measure."""
        s = turn.state()
        seat = s.to_move
        before = result(s).totals[seat]
        best, low = turn.legal[0], 10**9
        for action in turn.legal:
            if action.kind is ActionKind.TEA:
                continue
            gain = result(apply_action(s, action)).totals[seat] - before
            if gain < low:
                best, low = action, gain
        return best


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    args = p.parse_args()
    asyncio.run(play(Weak(), args.server, os.environ["MEDINA_TOKEN"]))
