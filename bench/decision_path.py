"""The referee's own work per decision, in one process: what the server does for a decision
besides gRPC.

For every decision the server finds the legal actions, observes the game for the seat to
move (only the events since its last request, the scores reused from the last request's
state), builds the request's wire bytes (legal actions included, as the SDK's default Hello
asks), applies the bot's action, sends the turn's events to the other seats when a turn
ends (bots asking for updates), and writes the record line. This section times each of
those steps the way the server calls them, over 64 4-player medina-v2 games played
interleaved (one decision of each in turn, as 64 matches in play are), uniformly random
legal actions, new seeds in each of three passes (the memos meet new games, as a server's
do); it prints the median pass's microseconds per decision for each step.

The capacity section's "server CPU per decision" is this plus gRPC's and asyncio's work for
the messages (its raw ping-pong rows), plus CreateMatch and the streams' setup; in the
server the same steps take longer than here, their caches shared with the transport's work.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from medina.engine import GameState, apply_action, legal_moves, new_game, observe
from medina.records.writer import decision_line
from medina.referee.record import DecisionEntry, DecisionSource
from medina.referee.seat import ClockView, DecisionRequest
from medina.wire.play import request_bytes, update

from bench import quick

GAMES = 64
PLAYERS = 4
PASSES = 3
STEPS = (
    "legal actions",
    "observation",
    "request bytes",
    "engine move",
    "updates (if asked for)",
    "record line",
)


def one_pass(first_seed: int, games: int) -> tuple[int, dict[str, int]]:
    """Play ``games`` interleaved games; (decisions, nanoseconds spent in each step)."""
    now: Callable[[], int] = time.perf_counter_ns
    spent = dict.fromkeys(STEPS, 0)
    rngs = [random.Random(first_seed + i) for i in range(games)]
    states = [new_game("medina-v2", PLAYERS, first_seed + i) for i in range(games)]
    cursors = [[0] * PLAYERS for _ in range(games)]  # each seat's last request
    heard = [[0] * PLAYERS for _ in range(games)]  # each seat's last request or update
    requested: list[GameState | None] = [None] * games
    clock = ClockView(100, 0, None, 0, has_bank=False)
    decisions = 0
    live = True
    while live:
        live = False
        for g, s in enumerate(states):
            if s.over:
                continue
            live = True
            seat = s.to_move
            t0 = now()
            moves = legal_moves(s)
            t1 = now()
            obs = observe(s, seat, since=cursors[g][seat], known=requested[g])
            t2 = now()
            cursors[g][seat] = heard[g][seat] = s.n_events
            requested[g] = s
            request_bytes(DecisionRequest(decisions + 1, seat, obs, moves, clock), with_legal=True)
            t3 = now()
            action = moves.nth(rngs[g].randrange(len(moves)))
            after = apply_action(s, action)
            t4 = now()
            if after.placed == 0 or after.over:  # a turn ended: the others hear of it
                for other in range(PLAYERS):
                    if other != seat and heard[g][other] < after.n_events:
                        update(heard[g][other], after.events_since(heard[g][other]))
                        heard[g][other] = after.n_events
            t5 = now()
            decision_line(
                DecisionEntry(s.decisions, seat, decisions + 1, action, 7, (), DecisionSource.BOT)
            )
            t6 = now()
            times = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)
            for step, ns in zip(STEPS, times, strict=True):
                spent[step] += ns
            states[g] = after
            decisions += 1
    return decisions, spent


def main() -> None:
    """Print the table."""
    games = 16 if quick() else GAMES
    one_pass(10_000, 4)  # warm-up: imports, geometry tables
    passes = [one_pass(20_000 + 1_000 * k, games) for k in range(PASSES)]
    per = {
        step: statistics.median(spent[step] / decisions / 1000 for decisions, spent in passes)
        for step in STEPS
    }
    total = sum(per.values())
    decisions = passes[0][0]
    print(f"{'step':<28}{'us/decision':>12}{'share':>8}")
    for step in STEPS:
        print(f"{step:<28}{per[step]:>12.1f}{per[step] / total:>8.0%}")
    print(f"{'the referee path, in all':<28}{total:>12.1f}")
    print(
        f"({games} 4-player medina-v2 games interleaved, {decisions} decisions a pass, "
        f"median of {PASSES} passes with new seeds; one process, no gRPC: the capacity "
        "section's server CPU per decision adds the transport's own work)"
    )
