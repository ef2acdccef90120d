"""The example bots' own randomness, seeded by the bot's owner or by the match."""

from __future__ import annotations

import logging
import random

from medina.engine import Action, GameState
from medina.v1 import arena_pb2

from ..bot import Bot, Turn
from ..errors import LocalStateError

log = logging.getLogger("medina_client")


def match_seed(seed: int, seat: int) -> int:
    """The seed of an example bot playing ``seat`` of the match seeded ``seed``: a different
    one for every match seed and seat (seats are 0..3)."""
    return seed * 4 + seat


class SeededBot(Bot):
    """A bot with a seeded ``rng``.

    ``seed`` given: the bot plays the same way in every match. None: it is seeded from the
    match at its first ``Welcome`` (``match_seed(config.seed, seat)``), so the same match seed
    and seat give the same game (barring clock effects), and another match seed another game,
    also in the rulesets whose setup draws nothing from the seed (the 1st editions).
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(0 if seed is None else seed)
        self._seeded = seed is not None

    def on_start(self, welcome: arena_pb2.Welcome) -> None:
        """Seed from the match on the first Welcome (not again after a reconnect)."""
        if not self._seeded:
            self._seeded = True
            self.rng.seed(match_seed(welcome.config.seed, welcome.seat))

    def state_or_none(self, turn: Turn) -> GameState | None:
        """The rebuilt game state of ``turn``; None (logged) when it cannot be rebuilt but the
        request lists actions, so the caller plays ``random_legal`` instead. With no list to
        fall back on, the LocalStateError stands."""
        try:
            return turn.state()
        except LocalStateError as exc:
            if not turn.legal:
                raise
            log.warning("no local state (%s); playing a random legal action", exc)
            return None

    def random_legal(self, turn: Turn) -> Action:
        """A uniformly random action of the request's list."""
        legal = turn.legal
        return legal[self.rng.randrange(len(legal))]
