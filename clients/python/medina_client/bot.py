"""What a bot author implements (``Bot.choose``) and what it is given (``Turn``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

from medina.engine import Action, GameState
from medina.v1 import arena_pb2, game_pb2, match_pb2

from .errors import LocalStateError
from .messages import actions_from_legal


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
        #: Your seat (0-based).
        self.seat = seat
        #: Actions the server already refused for this request (left out of ``legal``).
        self.excluded = excluded
        self._state = state

    @property
    def request_id(self) -> int:
        """Id of the request being answered."""
        return self.request.request_id

    @property
    def observation(self) -> game_pb2.Observation:
        """The game as this seat sees it (protobuf; ``events`` since the previous request)."""
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

    # -- observation accessors ------------------------------------------------------------

    @property
    def to_move(self) -> int:
        """Seat whose decision it is (your seat, in a request)."""
        return self.request.observation.to_move

    @property
    def quota(self) -> int:
        """Pieces the seat to move must place this turn."""
        return self.request.observation.quota

    @property
    def placed(self) -> int:
        """Pieces placed so far this turn."""
        return self.request.observation.placed

    @property
    def board(self) -> game_pb2.Board:
        """The public board (cells, palaces, street, well)."""
        return self.request.observation.board

    @property
    def cells(self) -> Sequence[int]:
        """One ``medina.v1.Cell`` value per square (``row * cols + col``)."""
        return self.request.observation.board.cells

    @property
    def supply(self) -> game_pb2.Supply:
        """Your own pieces (buildings per colour, rooftops, stables, merchants, walls)."""
        return self.seat_view(self.seat).supply

    def seat_view(self, seat: int) -> game_pb2.SeatView:
        """Public facts about ``seat`` (and its supply when you may see it)."""
        for view in self.request.observation.seats:
            if view.seat == seat:
                return view
        raise LookupError(f"seat {seat} is not in the observation")

    @property
    def events(self) -> Sequence[game_pb2.Event]:
        """Public history entries since your previous request (``index`` numbers them)."""
        return self.request.observation.events

    # -- clock ------------------------------------------------------------------------------

    @property
    def clock(self) -> arena_pb2.Clock:
        """The clock of this decision as the server measures it."""
        return self.request.clock

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
        """Server-measured time of your previous reply."""
        return self.request.clock.last_reply_ms

    # -- local engine -------------------------------------------------------------------------

    def state(self) -> GameState:
        """The whole game as a local ``medina.engine.GameState`` for search.

        Rebuilt (lazily, once per new event) from the match config and the public
        history, so it holds what the table could deduce, the other seats'
        supplies included. Do not mutate it: ``medina.engine.apply_action``
        returns new states. Raises LocalStateError when the local copy cannot be
        rebuilt or does not agree with the observation.
        """
        s = self._state()
        obs = self.request.observation
        if s.to_move != obs.to_move or s.n_events != obs.first_event + len(obs.events):
            raise LocalStateError(
                f"the local engine state is out of step (event {s.n_events}, seat "
                f"{s.to_move} to move; the server says event "
                f"{obs.first_event + len(obs.events)}, seat {obs.to_move})"
            )
        return s


class Bot:
    """Subclass and implement ``choose``; the hooks are optional."""

    #: Name and version sent in the handshake.
    name: str = "bot"
    version: str = "0"

    def choose(self, turn: Turn) -> Action:
        """Return the action for this decision (one of ``turn.legal``)."""
        raise NotImplementedError

    def on_start(self, welcome: arena_pb2.Welcome) -> None:
        """Called after the handshake (again after a reconnect)."""

    def on_update(self, events: Sequence[game_pb2.Event]) -> None:
        """Called with public events as they arrive."""

    def on_rejected(self, rejected: arena_pb2.Rejected) -> None:
        """Called when the server refused an action; ``choose`` is asked again."""

    def on_notice(self, notice: arena_pb2.Notice) -> None:
        """Called when the server ignored a message (stale id, ...)."""

    def on_forfeit(self, forfeited: arena_pb2.SeatForfeited) -> None:
        """Called when a seat (this one or another) forfeits; the referee plays it from now on."""

    def on_end(self, result: match_pb2.MatchResult) -> None:
        """Called with the result."""
