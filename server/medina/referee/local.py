"""In-process seats: a policy function plays the seat with no network (tests, selfplay)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from medina.engine import Action, Event, GameState, legal_moves

from .config import MatchSettings
from .match import Match
from .record import RecordSink
from .seat import (
    DecisionRequest,
    ForfeitNotice,
    MatchEnd,
    RejectionNotice,
    ReplySignal,
    Signal,
)

#: A policy sees the referee's full state (in-process bots are trusted code).
Policy = Callable[[GameState, DecisionRequest], Action]


class LocalSeat:
    """A seat played by a Python function, answering at once."""

    def __init__(self, seat: int, policy: Policy, submit: Callable[[Signal], None]) -> None:
        self.seat = seat
        self.policy = policy
        self.submit = submit
        self.state: Callable[[], GameState] | None = None
        self.rejections: list[RejectionNotice] = []
        self.ended: MatchEnd | None = None
        self.events_seen = 0
        self.forfeits: list[ForfeitNotice] = []

    def request(self, request: DecisionRequest) -> None:
        """Decide at once and hand the reply to the referee."""
        assert self.state is not None, "LocalSeat.state must be bound to the match's state"
        action = self.policy(self.state(), request)
        self.submit(ReplySignal(self.seat, request.request_id, action, time.monotonic()))

    def reject(self, notice: RejectionNotice) -> None:
        """Keep the notice (tests read it)."""
        self.rejections.append(notice)

    def close_request(self, request_id: int) -> None:
        """Nothing to do."""

    def update(self, first_index: int, events: Sequence[Event]) -> None:
        """Count the events seen."""
        self.events_seen = first_index + len(events)

    def forfeited(self, notice: ForfeitNotice) -> None:
        """Keep the notice (tests read it)."""
        self.forfeits.append(notice)

    def end(self, end: MatchEnd) -> None:
        """Keep the end."""
        self.ended = end


def policy(strategy: Callable[[GameState, random.Random], Action], seed: int) -> Policy:
    """A seat policy playing ``strategy`` (a function of the state and a random number
    generator, such as the SDK's example strategies) with its own seeded randomness."""
    rng = random.Random(seed)
    return lambda state, _request: strategy(state, rng)


def random_policy(seed: int) -> Policy:
    """A policy choosing uniformly among the legal actions."""
    return policy(_uniform, seed)


def _uniform(state: GameState, rng: random.Random) -> Action:
    moves = legal_moves(state)
    return moves.nth(rng.randrange(len(moves)))


def local_match(
    match_id: str, settings: MatchSettings, policies: Sequence[Policy], sink: RecordSink
) -> Match:
    """A match whose every seat is played in process by ``policies``."""
    seats: list[LocalSeat] = []
    match: Match | None = None

    def submit(signal: Signal) -> None:
        assert match is not None
        match.submit(signal)

    for seat, policy in enumerate(policies):
        seats.append(LocalSeat(seat, policy, submit))
    match = Match(match_id, settings, seats, sink, connected=[True] * len(seats))
    for seat_obj in seats:
        seat_obj.state = lambda: match.state
    return match
