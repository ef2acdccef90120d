"""MatchService (organisers) and SpectatorService (live public view)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc

from medina.engine import Event, observe
from medina.records import catalog
from medina.records.catalog import StoredMatch, StoredState
from medina.records.errors import RecordError
from medina.referee.errors import ConfigError
from medina.referee.outcome import MatchOutcome
from medina.v1 import admin_pb2, admin_pb2_grpc, game_pb2
from medina.wire import convert

from ..common.admission import AdmissionLimits, LoopLag, refusal
from ..common.auth import require_organiser
from ..common.idempotency import CreatedMatches, create_once
from ..common.limits import ClientSlots, stream_slot
from ..common.listing import (
    SORT_KEYS_METADATA,
    ListingError,
    SortKey,
    encode_keys,
    page_size,
    paginate,
)
from ..common.status import Reason, abort
from .host import Arena, ArenaClosedError, HostedMatch

Context = grpc.aio.ServicerContext[Any, Any]
log = logging.getLogger("medina.rpc")


STORED_STATE = {
    StoredState.FINISHED: admin_pb2.MATCH_STATE_FINISHED,
    StoredState.ABORTED: admin_pb2.MATCH_STATE_ABORTED,
    StoredState.ABANDONED: admin_pb2.MATCH_STATE_ABANDONED,
    StoredState.INTERRUPTED: admin_pb2.MATCH_STATE_ABORTED,
    StoredState.UNREADABLE: admin_pb2.MATCH_STATE_ABORTED,
}


def stored_summary(stored: StoredMatch) -> admin_pb2.MatchSummary:
    """What the organiser sees of a match of an earlier server run."""
    msg = admin_pb2.MatchSummary(
        match_id=stored.match_id,
        state=STORED_STATE[stored.state],
        decisions=max(0, stored.decisions),
        record_path=str(stored.path),
        note=stored.note,
        from_record=True,
    )
    if stored.config is not None:
        msg.config.CopyFrom(stored.config)
    if stored.header is not None:
        msg.seats.extend(
            admin_pb2.SeatStatus(
                seat=s.seat, name=s.name, bot_name=s.bot_name, bot_version=s.bot_version
            )
            for s in stored.header.seats
        )
    if stored.result is not None:
        msg.result.CopyFrom(stored.result)
    return msg


def summary(hosted: HostedMatch) -> admin_pb2.MatchSummary:
    """What the organiser sees of a match."""
    match = hosted.match
    msg = admin_pb2.MatchSummary(
        match_id=match.match_id,
        config=convert.settings_to_proto(match.settings),
        state=int(match.phase),  # type: ignore[arg-type]
        decisions=match.state.decisions,
        seats=[
            admin_pb2.SeatStatus(
                seat=i,
                name=match.settings.seat_name(i),
                bot_name=match.bot_names[i],
                bot_version=match.bot_versions[i],
                connected=i in hosted.local or seat.connection is not None,
            )
            for i, seat in enumerate(hosted.seats)
        ],
        record_path=str(hosted.record_path),
    )
    if match.outcome is not None:
        msg.result.CopyFrom(convert.outcome_to_proto(match.outcome))
    return msg


class MatchServicer(admin_pb2_grpc.MatchServiceServicer):
    """Creating, listing and aborting matches."""

    def __init__(
        self,
        arena: Arena,
        organiser_token: str | None,
        admission: AdmissionLimits | None = None,
        lag: LoopLag | None = None,
    ) -> None:
        self.arena = arena
        self.token = organiser_token
        self.admission = admission or AdmissionLimits(max_loop_lag_ms=None)
        self.lag = lag or LoopLag()
        self.created = CreatedMatches()
        #: CreateMatch calls refused by admission control (/metrics).
        self.refused = 0

    async def CreateMatch(
        self, request: admin_pb2.CreateMatchRequest, context: Context
    ) -> admin_pb2.CreateMatchResponse:
        """Create a match from a configuration (once per request id)."""
        await require_organiser(context, self.token)
        return await create_once(
            self.created, request, context, lambda: self._create(request, context)
        )

    async def _create(
        self, request: admin_pb2.CreateMatchRequest, context: Context
    ) -> admin_pb2.CreateMatchResponse:
        try:
            settings = convert.settings_from_proto(request.config)
        except ConfigError as exc:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                Reason.MATCH_CONFIG_INVALID,
                f"bad match config: {exc}",
            )
        running = self.arena.running()
        shortest = min(
            (h.match.settings.time.decision_ms for h in running),
            default=settings.time.decision_ms,
        )
        shortest = min(shortest, settings.time.decision_ms)
        refused = refusal(self.admission, len(running), self.lag.ms, shortest)
        if refused is not None:
            self.refused += 1
            log.info("CreateMatch refused: %s", refused)
            await abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                Reason.SERVER_FULL,
                refused,
                retry_after_ms=self.admission.retry_after_ms,
            )
        try:
            hosted = self.arena.create(settings)
        except ArenaClosedError as exc:
            await abort(context, grpc.StatusCode.UNAVAILABLE, Reason.SHUTTING_DOWN, str(exc))
        except (RecordError, OSError) as exc:
            # No record, no match: a full or read-only disk is the operator's to fix.
            log.error("cannot create a match: %s", exc)
            await abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                Reason.RECORD_UNWRITABLE,
                f"cannot create the match record: {exc}",
            )
        return admin_pb2.CreateMatchResponse(
            match_id=hosted.match_id,
            tokens=[
                admin_pb2.SeatToken(seat=seat, token=token)
                for seat, token in enumerate(hosted.tokens)
            ],
            config=convert.settings_to_proto(settings),
        )

    async def ListMatches(
        self, request: admin_pb2.ListMatchesRequest, context: Context
    ) -> admin_pb2.ListMatchesResponse:
        """A page of matches, newest first, optionally only those in some states."""
        await require_organiser(context, self.token)
        states = {int(s) for s in request.states}
        # Summaries are built for the page only: counting and ordering need just the keys.
        entries: list[tuple[SortKey, catalog.Entry | HostedMatch]] = []
        for m in self.arena.stored.entries():
            if not states or int(STORED_STATE[m.state]) in states:
                entries.append(((0, m.mtime, m.match_id), m))
        for h in self.arena.matches.values():
            if not states or int(h.match.phase) in states:
                entries.append(((1, h.created, h.match_id), h))
        try:
            size = page_size(request.page_size if request.HasField("page_size") else None)
            page = paginate(entries, size, request.page_token)
        except ListingError as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, Reason.REQUEST_INVALID, str(exc))
        if _wants_keys(context):
            context.set_trailing_metadata(((SORT_KEYS_METADATA, encode_keys(page.keys)),))
        return admin_pb2.ListMatchesResponse(
            matches=[
                summary(m) if isinstance(m, HostedMatch) else self._stored_summary(m)
                for m in page.items
            ],
            next_page_token=page.next_token,
            total_size=page.total,
        )

    def _stored_summary(self, entry: catalog.Entry) -> admin_pb2.MatchSummary:
        """A listed record's summary, read back from it (a record that went away between
        the listing and the read is listed as unreadable)."""
        stored = self.arena.stored.get(entry.match_id)
        if stored is None:
            stored = StoredMatch(
                entry.match_id,
                self.arena.records_dir / f"{entry.match_id}.jsonl",
                StoredState.UNREADABLE,
                None,
                0,
                None,
                "the record went away",
                entry.mtime,
            )
        return stored_summary(stored)

    async def GetMatch(
        self, request: admin_pb2.GetMatchRequest, context: Context
    ) -> admin_pb2.GetMatchResponse:
        """One match."""
        await require_organiser(context, self.token)
        stored = self.arena.stored.get(request.match_id)
        if stored is not None:
            return admin_pb2.GetMatchResponse(match=stored_summary(stored))
        hosted = await _find(self.arena, request.match_id, context)
        return admin_pb2.GetMatchResponse(match=summary(hosted))

    async def AbortMatch(
        self, request: admin_pb2.AbortMatchRequest, context: Context
    ) -> admin_pb2.AbortMatchResponse:
        """Abort a match and wait until its record is complete."""
        await require_organiser(context, self.token)
        hosted = await _find(self.arena, request.match_id, context)
        hosted.match.abort(request.reason or "aborted by the organiser")
        await hosted.match.wait_done()
        return admin_pb2.AbortMatchResponse(match=summary(hosted))


def _wants_keys(context: Context) -> bool:
    """Whether the caller (a multi-worker front merging pages) asked for the sort keys."""
    return any(key == SORT_KEYS_METADATA for key, _ in context.invocation_metadata() or ())


async def _find(arena: Arena, match_id: str, context: Context) -> HostedMatch:
    hosted = arena.get(match_id)
    entry = arena.stored.entry(match_id) if hosted is None else None
    if entry is not None:
        state = entry.state.value
        await abort(
            context,
            grpc.StatusCode.FAILED_PRECONDITION,
            Reason.MATCH_ENDED,
            f"match {match_id} has ended ({state}); only its record remains",
            match_id=match_id,
            state=state,
        )
    if hosted is None:
        await abort(
            context,
            grpc.StatusCode.NOT_FOUND,
            Reason.MATCH_NOT_FOUND,
            f"no match with id {match_id!r}",
            match_id=match_id,
        )
    return hosted


class _Watcher:
    """A MatchObserver feeding a spectator stream."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[admin_pb2.WatchResponse | None] = asyncio.Queue()

    def on_events(self, first_index: int, events: Sequence[Event]) -> None:
        update = game_pb2.Update(events=convert.events_to_proto(first_index, events))
        self.queue.put_nowait(admin_pb2.WatchResponse(update=update))

    def on_end(self, outcome: MatchOutcome) -> None:
        self.queue.put_nowait(admin_pb2.WatchResponse(result=convert.outcome_to_proto(outcome)))
        self.queue.put_nowait(None)


class SpectatorServicer(admin_pb2_grpc.SpectatorServiceServicer):
    """Live public events of a match; never a hidden supply."""

    def __init__(self, arena: Arena, slots: ClientSlots | None = None) -> None:
        self.arena = arena
        self.slots = slots or ClientSlots(0)

    async def Watch(
        self, request: admin_pb2.WatchRequest, context: Context
    ) -> AsyncIterator[admin_pb2.WatchResponse]:
        """A public snapshot, then events as they happen, then the result."""
        async with stream_slot(self.slots, context):
            async for message in self._watch(request, context):
                yield message

    async def _watch(
        self, request: admin_pb2.WatchRequest, context: Context
    ) -> AsyncIterator[admin_pb2.WatchResponse]:
        hosted = await _find(self.arena, request.match_id, context)
        match = hosted.match
        watcher = _Watcher()
        _start, outcome = match.watch(watcher)
        snapshot = observe(match.state, None)  # public view: no supply but revealed ones
        yield admin_pb2.WatchResponse(snapshot=convert.observation_to_proto(snapshot))
        if outcome is not None:
            yield admin_pb2.WatchResponse(result=convert.outcome_to_proto(outcome))
            return
        try:
            while True:
                message = await watcher.queue.get()
                if message is None:
                    return
                yield message
        finally:
            match.unwatch(watcher)
