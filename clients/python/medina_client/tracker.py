"""Keeps a local engine copy of the game by replaying the public history, lazily.

The setup follows from the match config (ruleset, players, seed, start seat) and
every decision appears in the history as a placement or a tea break, so the
whole game state — including what the opponents still hold, which the table
could deduce too — is rebuilt exactly.

Feeding events only queues them (a few list operations per message); they are
applied to the engine state when ``state`` is read, so a bot that never asks
for the state pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from medina.engine import FollowError, GameFollower, GameState
from medina.v1 import game_pb2, match_pb2

from .errors import LocalStateError
from .messages import action_of_event, game_from_config


class GameTracker:
    """A GameState kept in step with the events a seat receives."""

    def __init__(self, config: match_pb2.MatchConfig) -> None:
        self._config = config
        self._follower: GameFollower | None = None  # built on first use
        self._pending: list[Sequence[game_pb2.Event]] = []
        self._received = 0  # 1 + the highest event index fed so far
        self._error: LocalStateError | None = None

    @property
    def received(self) -> int:
        """Number of history entries known (fed), applied or not."""
        return self._received

    def feed(self, events: Sequence[game_pb2.Event]) -> None:
        """Queue events; those already known (by index) are skipped when applied."""
        if events:
            last = events[-1].index + 1
            if last > self._received:
                self._pending.append(events)
                self._received = last

    @property
    def state(self) -> GameState:
        """The game after every event fed so far; LocalStateError if it cannot be rebuilt."""
        if self._follower is None and self._error is None:
            self._follower = self._setup()
        if self._pending:
            pending, self._pending = self._pending, []
            for batch in pending:
                self._apply(batch)
        if self._error is not None:
            raise self._error
        assert self._follower is not None
        return self._follower.state

    def _setup(self) -> GameFollower | None:
        try:
            return GameFollower(game_from_config(self._config))
        except ValueError as exc:
            self._error = LocalStateError(f"cannot set up the match config locally: {exc}")
            return None

    def _apply(self, events: Sequence[game_pb2.Event]) -> None:
        for event in events:
            if self._error is not None or self._follower is None:
                return
            try:
                self._follower.feed(
                    event.index, action_of_event(event), str(event.WhichOneof("event"))
                )
            except FollowError as exc:
                self._error = LocalStateError(str(exc))
                return
