"""``make run`` until the arena exists: a local engine-only game, board after each turn."""

from __future__ import annotations

import random

from medina.engine import (
    PALACE_COLOURS,
    ROOFTOP_COLOURS,
    ActionKind,
    EventKind,
    apply_action,
    legal_moves,
    new_game,
    render,
    result,
    square_name,
)


def main(ruleset: str = "medina-v2", players: int = 4, seed: int = 1) -> None:
    """Play one seeded random game and print it."""
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed)
    g = s.rules.geometry
    seen = 0
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        if s.over or s.placed == 0:
            for e in s.events_since(seen):
                if e.kind is EventKind.PLACED:
                    what = ActionKind(e.piece).name.lower().replace("_", " ")
                    if e.piece == ActionKind.BUILDING:
                        what = f"{PALACE_COLOURS[e.colour]} building"
                    print(f"seat {e.seat + 1} places {what} at {square_name(g, e.square)}")
            seen = s.n_events
            print(render(s), end="\n\n")
    res = result(s)
    for seat, (total, rank) in enumerate(zip(res.totals, res.ranks, strict=True)):
        colour = ROOFTOP_COLOURS[s.rules.rooftop_colours[seat]]
        print(f"rank {rank}: seat {seat + 1} ({colour}) {total} points")


if __name__ == "__main__":
    main()
