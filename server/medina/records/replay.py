"""Re-running a record's decisions through the engine, one step at a time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from medina.engine import (
    Action,
    EngineError,
    GameState,
    IllegalActionError,
    apply_action,
    square_name,
)
from medina.engine.notation import COLOUR_LETTERS
from medina.referee.config import MatchSettings
from medina.referee.errors import ConfigError
from medina.v1 import record_pb2
from medina.wire.convert import MalformedActionError, action_from_proto
from medina.wire.settings import settings_from_proto

from .errors import RecordError
from .reader import Record

#: Decisions the referee made for a seat.
_REFEREE_SOURCES = (record_pb2.DECISION_SOURCE_TIMEOUT, record_pb2.DECISION_SOURCE_FALLBACK)


class ReplayError(RecordError):
    """An entry of the record does not replay; names the line and the reason."""

    def __init__(self, line: int, message: str, decision: int = -1) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message
        self.decision = decision  # index of the decision that does not replay, or -1


@dataclass(frozen=True)
class Step:
    """One decision replayed: the state before and after it."""

    line: int
    index: int
    seat: int
    action: Action
    before: GameState
    after: GameState


def start_state(record: Record) -> tuple[MatchSettings, GameState]:
    """The settings and initial state a record's header describes (after its scripted
    opening, if it has one)."""
    try:
        settings = settings_from_proto(record.header.config)
    except ConfigError as exc:
        raise ReplayError(1, f"bad match config in the header: {exc}") from None
    s = settings.new_game()
    setup = record.header.setup
    if s.rules.well and setup.HasField("well") and setup.HasField("start_merchant"):
        merchant = (s.merchants & -s.merchants).bit_length() - 1
        if (setup.well, setup.start_merchant) != (s.well, merchant):
            # A record written by another tool may draw its setup differently: use its squares.
            try:
                settings = replace(settings, well=setup.well, start_merchant=setup.start_merchant)
            except ConfigError as exc:
                raise ReplayError(1, f"bad setup in the header: {exc}") from None
            s = settings.new_game()
    if setup.opening:
        try:
            opening = tuple(action_from_proto(a, s.rules.geometry) for a in setup.opening)
            for action in opening:
                s = apply_action(s, action)
        except (MalformedActionError, EngineError) as exc:
            raise ReplayError(1, f"bad scripted opening in the header: {exc}") from None
        settings = replace(settings, opening=opening)
    return settings, s


def describe(s: GameState, action: Action) -> str:
    """``building g F7`` style text for error messages."""
    g = s.rules.geometry
    name = action.kind.name.lower()
    where = square_name(g, action.square) if 0 <= action.square < g.size else str(action.square)
    if action.colour >= 0 and action.colour < 4:
        name += f" {COLOUR_LETTERS[action.colour]}"
    return f"{name} {where}" if action.square >= 0 else name


def replay(record: Record) -> Iterator[Step]:
    """Apply every decision in order; raises ReplayError at the first that does not fit."""
    _settings, s = start_state(record)
    for line, entry in record.decisions:
        index = entry.index
        if s.over:
            raise ReplayError(line, f"decision {index} after the game was over", index)
        if index != s.decisions:
            raise ReplayError(
                line, f"decision index {index}, expected {s.decisions} (entries missing?)", index
            )
        if entry.seat != s.to_move:
            raise ReplayError(
                line,
                f"decision {index} is by seat {entry.seat}, but seat {s.to_move} is to move",
                index,
            )
        try:
            action = action_from_proto(entry.action, s.rules.geometry)
        except MalformedActionError as exc:
            raise ReplayError(line, f"decision {index}: malformed action: {exc}", index) from None
        try:
            # The referee's own choices are marked in the history, as they were live.
            after = apply_action(s, action, by_referee=entry.source in _REFEREE_SOURCES)
        except IllegalActionError as exc:
            raise ReplayError(
                line, f"decision {index} ({describe(s, action)}) is illegal: {exc.message}", index
            ) from None
        yield Step(line, index, entry.seat, action, s, after)
        s = after


def replay_to_end(record: Record) -> tuple[GameState | None, int, ReplayError | None]:
    """Replay as far as the record goes: the last good state (None when the header itself is
    bad), the number of decisions replayed, and the error that stopped it, if any."""
    state: GameState | None = None
    count = 0
    try:
        _settings, state = start_state(record)
        for step in replay(record):
            count += 1
            state = step.after
    except ReplayError as exc:
        return state, count, exc
    return state, count, None
