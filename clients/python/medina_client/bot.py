"""What a bot author implements (``Bot.choose``) and what it is given (``Turn``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

from medina.engine import Action, GameState
from medina.v1 import arena_pb2, game_pb2, match_pb2
from medina.wire.convert import actions_from_legal


class Turn:
    """One decision: the observation, the legal actions, the clock, and a local engine state.

    Everything is decoded lazily, so a bot pays only for what it reads.
    """

    def __init__(
        self,
        request: arena_pb2.DecisionRequest,
        seat: int,
        state: Callable[[], GameState],
        excluded: frozenset[Action] = frozenset(),
    ) -> None:
        self.request = request
        self.seat = seat
        self._state = state
        self.excluded = excluded

    @property
    def request_id(self) -> int:
        """Id of the request being answered."""
        return self.request.request_id

    @property
    def observation(self) -> game_pb2.Observation:
        """The game as this seat sees it (protobuf; events since the previous request)."""
        return self.request.observation

    @cached_property
    def legal(self) -> list[Action]:
        """Every legal action (minus any the server already refused for this request).

        Empty when the bot asked the server to omit legal actions; use ``state()`` then.
        """
        actions = actions_from_legal(self.request.legal)
        if self.excluded:
            actions = [a for a in actions if a not in self.excluded]
        return actions

    @property
    def time_left_ms(self) -> int:
        """Time allowed for this decision when the server sent it."""
        return self.request.clock.time_left_ms

    @property
    def bank_ms(self) -> int:
        """Bank left."""
        return self.request.clock.bank_ms

    @property
    def last_reply_ms(self) -> int:
        """Server-measured time of the previous reply."""
        return self.request.clock.last_reply_ms

    def state(self) -> GameState:
        """The full game as a local ``medina.engine.GameState`` for search.

        It is rebuilt from the public history, so it holds what the table could
        deduce, including the other seats' supplies. Do not mutate it:
        ``medina.engine.apply_action`` returns new states.
        """
        return self._state()


class Bot:
    """Subclass and implement ``choose``; the hooks are optional."""

    name: str = "bot"
    version: str = "0"

    def choose(self, turn: Turn) -> Action:
        """Return the action for this decision (one of ``turn.legal``)."""
        raise NotImplementedError

    def on_start(self, welcome: arena_pb2.Welcome) -> None:
        """Called after the handshake (again after a reconnect)."""

    def on_update(self, events: list[game_pb2.Event]) -> None:
        """Called with public events as they arrive."""

    def on_rejected(self, rejected: arena_pb2.Rejected) -> None:
        """Called when the server refused an action; ``choose`` is asked again."""

    def on_notice(self, notice: arena_pb2.Notice) -> None:
        """Called when the server ignored a message (stale id, ...)."""

    def on_end(self, result: match_pb2.MatchResult) -> None:
        """Called with the result."""
