"""The bot stream's messages (``ArenaService.Play``), server side: every ``PlayResponse`` the
arena sends, built from the referee's plain data, and the one message a front reads back.

The transport (``rpc/single/grpc_seat.py``, ``rpc/single/arena_servicer.py``,
``rpc/cluster/front.py``) decides when to send what; what goes on the wire is built here.
A decision request, sent on every decision, and an update, sent to every seat at every
turn's end, are built straight as wire bytes (``request_bytes``, ``update``;
``tests/wire/test_request_bytes.py`` checks both against the message built field by field);
the rest are protobuf messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from medina.engine import Event, Observation, Supply
from medina.referee.config import MatchSettings
from medina.referee.record import ErrorCode
from medina.referee.seat import ClockView, DecisionRequest, ForfeitNotice, MatchEnd, RejectionNotice
from medina.v1 import arena_pb2

from .settings import outcome_to_proto, settings_to_proto
from .shared.events import events_to_proto, supply_to_proto, update_bytes
from .shared.legal import legal_bytes
from .shared.observation import observation_bytes, observation_to_proto
from .shared.packed import field, key, present, scalar, varint
from .shared.protocol import PROTOCOL_MINOR, PROTOCOL_VERSION

__all__ = [
    "forfeited",
    "match_ended",
    "notice",
    "redirect_bytes",
    "rejected",
    "request_bytes",
    "update",
    "welcome",
]

_REQUEST = key(arena_pb2.PlayResponse, "request")[0]
_UPDATE = key(arena_pb2.PlayResponse, "update")[0]
_REQUEST_ID = key(arena_pb2.DecisionRequest, "request_id")[1]
_OBSERVATION = key(arena_pb2.DecisionRequest, "observation")[0]
_LEGAL = key(arena_pb2.DecisionRequest, "legal")[0]
_CLOCK = key(arena_pb2.DecisionRequest, "clock")[0]
_TIME_LEFT = key(arena_pb2.Clock, "time_left_ms")[1]
_BANK = key(arena_pb2.Clock, "bank_ms")[1]
_LAST_REPLY = key(arena_pb2.Clock, "last_reply_ms")[1]
_STRIKES = key(arena_pb2.Clock, "strikes")[1]
_BANK_LEFT = key(arena_pb2.Clock, "bank_left_ms")[1]
_STRIKES_LEFT = key(arena_pb2.Clock, "strikes_left")[1]


def welcome(
    *,
    match_id: str,
    seat: int,
    settings: MatchSettings,
    resume_token: str,
    observation: Observation,
    features: Sequence[str],
    initial_supplies: Sequence[Supply],
) -> arena_pb2.PlayResponse:
    """The handshake's answer: the match, the seat, its view so far and what is in effect."""
    return arena_pb2.PlayResponse(
        welcome=arena_pb2.Welcome(
            protocol_version=PROTOCOL_VERSION,
            match_id=match_id,
            seat=seat,
            config=settings_to_proto(settings),
            resume_token=resume_token,
            observation=observation_to_proto(observation),
            protocol_minor=PROTOCOL_MINOR,
            features=features,
            initial_supplies=[supply_to_proto(x) for x in initial_supplies],
        )
    )


def request_bytes(request: DecisionRequest, *, with_legal: bool) -> bytes:
    """A ``PlayResponse`` carrying ``request``, serialized: built as wire bytes because it is
    sent on every decision (tests check it against the message built field by field)."""
    clock = request.clock
    last = clock.last_reply_ms
    body = b"".join(
        (
            scalar(_REQUEST_ID, request.request_id),
            field(_OBSERVATION, observation_bytes(request.observation)),
            present(_LEGAL, legal_bytes(request.legal)) if with_legal else b"",
            present(
                _CLOCK,
                scalar(_TIME_LEFT, clock.time_left_ms)
                + scalar(_BANK, clock.bank_ms)
                + (b"" if last is None else _LAST_REPLY + varint(last))
                + scalar(_STRIKES, clock.strikes)
                + (_BANK_LEFT + varint(clock.bank_ms) if clock.has_bank else b"")
                + scalar(_STRIKES_LEFT, clock.strikes_left),
            ),
        )
    )
    return field(_REQUEST, body)


def rejected(notice: RejectionNotice) -> arena_pb2.PlayResponse:
    """A reply refused; the request is open again."""
    return arena_pb2.PlayResponse(
        rejected=arena_pb2.Rejected(
            request_id=notice.request_id,
            code=int(notice.code),  # type: ignore[arg-type]
            rule=notice.rule,
            message=notice.message,
            rejections_left=max(0, notice.rejections_left),
            clock=clock_to_proto(notice.clock),
            squares=notice.squares,
        )
    )


def clock_to_proto(view: ClockView) -> arena_pb2.Clock:
    """A decision's clock as the seat is told it (``bank_left_ms`` absent without a bank)."""
    return arena_pb2.Clock(
        time_left_ms=view.time_left_ms,
        bank_ms=view.bank_ms,
        last_reply_ms=view.last_reply_ms,
        strikes=view.strikes,
        bank_left_ms=view.bank_ms if view.has_bank else None,
        strikes_left=view.strikes_left,
    )


def update(first_index: int, events: Sequence[Event]) -> bytes:
    """A ``PlayResponse`` carrying public events, the first at history index
    ``first_index``, serialized: every seat is sent one at every turn's end, so it is built
    as wire bytes from the events' kept bytes (no message parsed and serialized again)."""
    return present(_UPDATE, update_bytes(first_index, events))


def forfeited(notice: ForfeitNotice) -> arena_pb2.PlayResponse:
    """A seat forfeited (sent to bots that asked for the ``forfeit-notices`` feature)."""
    return arena_pb2.PlayResponse(
        forfeited=arena_pb2.SeatForfeited(
            seat=notice.seat,
            termination=int(notice.termination),  # type: ignore[arg-type]
            detail=notice.detail,
            strikes=notice.strikes,
        )
    )


def match_ended(
    end: MatchEnd, held_from: int = 0, held: Sequence[Event] = ()
) -> arena_pb2.PlayResponse:
    """The result and the seat's final view; ``held``: events a bot without updates has not
    been sent yet (from history index ``held_from``), so that it still learns how the game
    ended."""
    msg = arena_pb2.MatchEnded(
        result=outcome_to_proto(end.outcome),
        observation=observation_to_proto(end.observation),
    )
    if held:
        msg.observation.first_event = held_from
        msg.observation.events.extend(events_to_proto(held_from, held))
    return arena_pb2.PlayResponse(ended=msg)


def notice(code: ErrorCode, message: str, request_id: int = 0) -> arena_pb2.PlayResponse:
    """An in-band notice: a message that went no further (``request_id`` 0: absent)."""
    return arena_pb2.PlayResponse(
        notice=arena_pb2.Notice(
            code=int(code),  # type: ignore[arg-type]
            request_id=request_id or None,
            message=message,
        )
    )


def redirect_bytes(port: int) -> bytes:
    """A serialized ``PlayResponse`` sending the bot to the process holding its match."""
    return arena_pb2.PlayResponse(redirect=arena_pb2.Redirect(port=port)).SerializeToString()
