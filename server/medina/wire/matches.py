"""The organiser's and the spectator's messages (``MatchService``, ``SpectatorService``),
server side: match summaries from the referee's view or a record, the answers to each call,
the spectator stream's messages, and the few requests a multi-process front sends its
workers. The rpc layer decides what to answer; what goes on the wire is built here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from medina.engine import Event, Observation
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome
from medina.referee.view import MatchView
from medina.v1 import admin_pb2, game_pb2, match_pb2, record_pb2

from .settings import outcome_to_proto, settings_to_proto
from .shared.events import events_to_proto
from .shared.observation import observation_to_proto

__all__ = [
    "aborted",
    "count_request",
    "created",
    "found",
    "get_request",
    "listed",
    "recorded_summary",
    "summary",
    "watch_result",
    "watch_snapshot",
    "watch_update",
]


# -- summaries ------------------------------------------------------------------------------


def summary(
    view: MatchView, *, connected: Sequence[bool], record_path: str, note: str = ""
) -> admin_pb2.MatchSummary:
    """What the organiser sees of a match in memory (``connected``: whether each seat has a
    live stream, or plays in process, as the transport knows it; ``note``: why it is in its
    state, when that is not obvious)."""
    msg = admin_pb2.MatchSummary(
        match_id=view.match_id,
        config=settings_to_proto(view.settings),
        state=int(view.phase),  # type: ignore[arg-type]
        decisions=view.state.decisions,
        seats=[
            admin_pb2.SeatStatus(
                seat=s.seat,
                name=view.settings.seat_name(s.seat),
                bot_name=s.bot_name,
                bot_version=s.bot_version,
                connected=connected[s.seat],
            )
            for s in view.seats
        ],
        record_path=record_path,
        note=note,
    )
    if view.outcome is not None:
        msg.result.CopyFrom(outcome_to_proto(view.outcome))
    return msg


def recorded_summary(
    *,
    match_id: str,
    state: int,
    decisions: int,
    record_path: str,
    note: str,
    header: record_pb2.RecordHeader | None,
    result: match_pb2.MatchResult | None,
) -> admin_pb2.MatchSummary:
    """What the organiser sees of a match known only from its record (``state``: a
    ``MatchState`` number; ``header`` and ``result`` as the record holds them, if it does)."""
    msg = admin_pb2.MatchSummary(
        match_id=match_id,
        state=state,  # type: ignore[arg-type]
        decisions=max(0, decisions),
        record_path=record_path,
        note=note,
        from_record=True,
    )
    if header is not None:
        msg.config.CopyFrom(header.config)
        msg.seats.extend(
            admin_pb2.SeatStatus(
                seat=s.seat, name=s.name, bot_name=s.bot_name, bot_version=s.bot_version
            )
            for s in header.seats
        )
    if result is not None:
        msg.result.CopyFrom(result)
    return msg


# -- MatchService's answers ------------------------------------------------------------------


def created(
    match_id: str, tokens: Sequence[str], settings: MatchSettings
) -> admin_pb2.CreateMatchResponse:
    """A match created: its id, each seat's token (in seat order) and its configuration."""
    return admin_pb2.CreateMatchResponse(
        match_id=match_id,
        tokens=[admin_pb2.SeatToken(seat=seat, token=token) for seat, token in enumerate(tokens)],
        config=settings_to_proto(settings),
    )


def not_created() -> admin_pb2.CreateMatchResponse:
    """The empty answer of a refused CreateMatch: its status (set on the call) says why, and
    grpc sends that status instead of this message."""
    return admin_pb2.CreateMatchResponse()


def listed(
    items: Iterable[admin_pb2.MatchSummary], next_token: str, total: int
) -> admin_pb2.ListMatchesResponse:
    """A page of the listing."""
    return admin_pb2.ListMatchesResponse(
        matches=items, next_page_token=next_token, total_size=total
    )


def found(match: admin_pb2.MatchSummary) -> admin_pb2.GetMatchResponse:
    """GetMatch's answer."""
    return admin_pb2.GetMatchResponse(match=match)


def aborted(match: admin_pb2.MatchSummary) -> admin_pb2.AbortMatchResponse:
    """AbortMatch's answer: the match as it ended."""
    return admin_pb2.AbortMatchResponse(match=match)


# -- the front's requests to its workers ----------------------------------------------------


def count_request(states: Iterable[int]) -> admin_pb2.ListMatchesRequest:
    """The smallest listing that tells how many matches are in ``states`` (its total)."""
    return admin_pb2.ListMatchesRequest(page_size=1, states=states)  # type: ignore[arg-type]


def create_request(settings: MatchSettings, request_id: str = "") -> admin_pb2.CreateMatchRequest:
    """CreateMatch for ``settings``; with a ``request_id`` (at most 128 characters kept) a
    retry returns the match the first call created."""
    return admin_pb2.CreateMatchRequest(
        config=settings_to_proto(settings), request_id=request_id[:128]
    )


def abort_request(match_id: str, reason: str) -> admin_pb2.AbortMatchRequest:
    """AbortMatch with the organiser's reason."""
    return admin_pb2.AbortMatchRequest(match_id=match_id, reason=reason)


def forfeit_request(match_id: str, seat: int, reason: str) -> admin_pb2.ForfeitSeatRequest:
    """ForfeitSeat: the seat's bot is gone (its process exited)."""
    return admin_pb2.ForfeitSeatRequest(match_id=match_id, seat=seat, reason=reason)


def forfeited(detail: str, ever_connected: bool) -> admin_pb2.ForfeitSeatResponse:
    """The ForfeitSeat answer (``detail`` empty: the seat had forfeited already)."""
    return admin_pb2.ForfeitSeatResponse(detail=detail, ever_connected=ever_connected)


def get_request(match_id: str) -> admin_pb2.GetMatchRequest:
    """GetMatch for one match."""
    return admin_pb2.GetMatchRequest(match_id=match_id)


def list_request(page_size: int, states: Iterable[int]) -> admin_pb2.ListMatchesRequest:
    """One page of the matches in ``states``."""
    return admin_pb2.ListMatchesRequest(page_size=page_size, states=states)  # type: ignore[arg-type]


def watch_request(match_id: str) -> admin_pb2.WatchRequest:
    """Watch one match (a spectator)."""
    return admin_pb2.WatchRequest(match_id=match_id)


# -- SpectatorService.Watch ------------------------------------------------------------------


def watch_snapshot(observation: Observation) -> admin_pb2.WatchResponse:
    """The stream's first message: the public view so far."""
    return admin_pb2.WatchResponse(snapshot=observation_to_proto(observation))


def watch_update(first_index: int, events: Sequence[Event]) -> admin_pb2.WatchResponse:
    """Public events, the first at history index ``first_index``."""
    return admin_pb2.WatchResponse(
        update=game_pb2.Update(events=events_to_proto(first_index, events))
    )


def watch_result(outcome: MatchOutcome) -> admin_pb2.WatchResponse:
    """The stream's last message: how the match ended."""
    return admin_pb2.WatchResponse(result=outcome_to_proto(outcome))
