"""Hypothesis strategies shared by the fuzz tests: game states reached by seeded random play."""

from __future__ import annotations

import random
from functools import lru_cache

from hypothesis import settings
from hypothesis import strategies as st
from medina.engine import CONFIGURATIONS, GameState, apply_action, legal_moves, new_game

#: Reproducible runs (no example database, derandomized) sized for a 2-core CI machine.
FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=300)


@lru_cache(maxsize=256)
def _playout(config: int, seed: int) -> tuple[GameState, ...]:
    ruleset, players = CONFIGURATIONS[config]
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed, start_seat=seed % players)
    out = [s]
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        out.append(s)
    return tuple(out)


@st.composite
def game_states(draw: st.DrawFn) -> GameState:
    """A state somewhere in a seeded random game of any supported configuration."""
    config = draw(st.integers(0, len(CONFIGURATIONS) - 1))
    seed = draw(st.integers(0, 40))
    line = _playout(config, seed)
    return line[draw(st.integers(0, len(line) - 1))]


#: Any int32, weighted towards the small values that reach the interesting branches.
int32s = st.one_of(st.integers(-3, 300), st.integers(-(2**31), 2**31 - 1))
