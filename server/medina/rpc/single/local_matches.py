"""This process's matches as organisers and spectators see them: the ``MatchBackend`` of the
single-process server (an ``Arena``), and SpectatorService (the live public view)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence, Set
from dataclasses import replace
from typing import Any, NoReturn

import grpc

from medina.engine import Event, observe
from medina.records import catalog
from medina.records.catalog import StoredMatch
from medina.records.errors import RecordError
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome
from medina.v1 import admin_pb2, admin_pb2_grpc
from medina.wire import matches

from ..common.admission import Load, ServerFullError, match_files, out_of_files
from ..common.auth import carries_token
from ..common.limits import ClientSlots, stream_slot
from ..common.listing import Page, SortKey, paginate
from ..common.match_service import (
    Admit,
    entry_summaries,
    forfeit_detail,
    recorded_page,
    refuse_ended,
    refuse_over,
    refuse_seat,
    refuse_unknown,
)
from ..common.start_queue import StartQueue
from ..common.status import Reason, abort, refuse
from .host import Arena, ArenaClosedError, HostedMatch, RecordsFullError

Context = grpc.aio.ServicerContext[Any, Any]
log = logging.getLogger("medina.rpc")

#: The retry hint of a CreateMatch refused for the records' room (an organiser waits this long).
RECORDS_RETRY_MS = 10_000


def summary(hosted: HostedMatch, queue: StartQueue | None = None) -> admin_pb2.MatchSummary:
    """What the organiser sees of a match (``queue``: the start queue it may wait in)."""
    return matches.summary(
        hosted.match.view(),
        connected=[
            i in hosted.local or seat.connection is not None for i, seat in enumerate(hosted.seats)
        ],
        record_path=str(hosted.record_path),
        note="" if queue is None else queue.note(hosted.timing),
    )


class LocalMatches:
    """The matches of this process's ``Arena`` (a ``MatchBackend``)."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def create(
        self,
        request: admin_pb2.CreateMatchRequest,
        settings: MatchSettings,
        admit: Admit,
        context: Context,
    ) -> admin_pb2.CreateMatchResponse | None:
        """Create the match here, weighed against the matches waiting or running and the
        shortest decision clock among them and the new match."""
        if not await admit(self._load(settings)):
            return None  # refused: the call's status says so
        try:
            hosted = self.arena.create(settings)
        except ArenaClosedError as exc:
            await abort(context, grpc.StatusCode.UNAVAILABLE, Reason.SHUTTING_DOWN, str(exc))
        except RecordsFullError as exc:
            # Asked for again and again while the disk is full (a ladder): refused without
            # raising, logged once by the arena (``RecordsSpace``), retried later.
            refuse(
                context,
                grpc.StatusCode.UNAVAILABLE,
                Reason.RECORD_UNWRITABLE,
                f"cannot create the match record: {exc}",
                retry_after_ms=RECORDS_RETRY_MS,
            )
            return None
        except OSError as exc:
            # Out of open files is the server's limit, not its disk: refused as SERVER_FULL
            # (the organiser retries), with what the operator can raise.
            full = out_of_files(exc, "the match record")
            if full is None:
                await self._unwritable(exc, context)
            log.error("cannot create a match: %s", full)
            raise ServerFullError(full) from exc
        except RecordError as exc:
            await self._unwritable(exc, context)
        return matches.created(hosted.match_id, hosted.tokens, settings)

    @staticmethod
    async def _unwritable(exc: Exception, context: Context) -> NoReturn:
        """End CreateMatch for a record that cannot be created (UNAVAILABLE)."""
        # No record, no match: a full or read-only disk is the operator's to fix.
        log.error("cannot create a match: %s", exc)
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            Reason.RECORD_UNWRITABLE,
            f"cannot create the match record: {exc}",
        )

    def _load(self, settings: MatchSettings) -> Load:
        """The arena's load for a new match with ``settings`` (``Arena.load``), counting
        every match waiting or running against ``max_matches``: waiting for their bots or
        for room counts too, so a flood of matches no bot comes for stays bounded (each
        holds its record open until its connect deadline). The open files are those of every
        match not ended and of the new one (``admission.match_files``)."""
        return replace(
            self.arena.load(settings.time.decision_ms),
            active=len(self.arena.running()),
            files=self.arena.files(),
            new_files=match_files(settings.players),
        )

    async def page(
        self, request: admin_pb2.ListMatchesRequest, states: Set[int], size: int, context: Context
    ) -> Page:
        """Live matches and records in one order; summaries are built for the page only,
        and only the records the page can show are taken from the catalog (in its order)."""
        token = request.page_token
        records, recorded = recorded_page(self.arena.stored, states, token, size)
        while True:
            entries: list[tuple[SortKey, catalog.Entry | HostedMatch]] = [*records]
            for h in self.arena.matches.values():
                if not states or int(h.match.phase) in states:
                    entries.append(((1, h.created, h.match_id), h))
            page = paginate(entries, size, token, total=recorded + len(entries) - len(records))
            # Ended matches whose records were deleted (``replay prune``) leave memory, the
            # listing and its count, as records do in ``recorded_page``: a page checks its own.
            shown = (m for m in page.items if isinstance(m, HostedMatch))
            if not self.arena.forget_pruned(shown):
                break
        listed = [m for m in page.items if isinstance(m, catalog.Entry)]
        read = iter(await entry_summaries(self.arena.stored, listed))
        items = [
            summary(m, self.arena.queue) if isinstance(m, HostedMatch) else next(read)
            for m in page.items
        ]
        return Page(items, page.next_token, page.total, page.keys)

    def record(self, match_id: str) -> StoredMatch | None:
        """A match of an earlier run, or of this one that has left memory."""
        return self.arena.stored.get(match_id)

    async def get(self, match_id: str, context: Context) -> admin_pb2.MatchSummary:
        """A match in memory."""
        return summary(await _find(self.arena, match_id, context), self.arena.queue)

    async def abort(
        self, request: admin_pb2.AbortMatchRequest, context: Context
    ) -> admin_pb2.MatchSummary:
        """Abort a match here and wait until its record is complete."""
        hosted = await _find(self.arena, request.match_id, context)
        hosted.match.abort(request.reason or "aborted by the organiser")
        await hosted.match.wait_done()
        return summary(hosted, self.arena.queue)

    async def forfeit(
        self, request: admin_pb2.ForfeitSeatRequest, context: Context
    ) -> admin_pb2.ForfeitSeatResponse:
        """Forfeit a seat whose program is gone: the referee is handed the same signal as
        when its process exits in this process (``Match.process_exited``)."""
        hosted = await _find(self.arena, request.match_id, context)
        match, seat = hosted.match, request.seat
        if not 0 <= seat < match.settings.players:
            await refuse_seat(context, request.match_id, seat, match.settings.players)
        if match.outcome is not None:
            await refuse_over(context, request.match_id)
        ever_connected = hosted.seats[seat].ever_connected
        if match.is_forfeited(seat):
            return matches.forfeited("", ever_connected)
        detail = forfeit_detail(request.reason, ever_connected)
        log.info("match %s: seat %d forfeited by the organiser: %s", match.match_id, seat, detail)
        match.process_exited(seat, detail)
        return matches.forfeited(detail, ever_connected)


async def _find(arena: Arena, match_id: str, context: Context) -> HostedMatch:
    hosted = arena.get(match_id)
    entry = arena.stored.entry(match_id) if hosted is None else None
    if entry is not None:
        await refuse_ended(context, match_id, entry.state.value)
    if hosted is None:
        await refuse_unknown(context, match_id)
    return hosted


class _Watcher:
    """A MatchObserver feeding a spectator stream."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[admin_pb2.WatchResponse | None] = asyncio.Queue()

    def on_events(self, first_index: int, events: Sequence[Event]) -> None:
        self.queue.put_nowait(matches.watch_update(first_index, events))

    def on_end(self, outcome: MatchOutcome) -> None:
        self.queue.put_nowait(matches.watch_result(outcome))
        self.queue.put_nowait(None)


class SpectatorServicer(admin_pb2_grpc.SpectatorServiceServicer):
    """Live public events of a match; never a hidden supply."""

    def __init__(
        self, arena: Arena, slots: ClientSlots | None = None, organiser_token: str | None = None
    ) -> None:
        self.arena = arena
        self.slots = slots or ClientSlots(0)
        #: Streams carrying it (a ladder's, a tournament runner's) hold no client slot.
        self.organiser_token = organiser_token

    async def Watch(
        self, request: admin_pb2.WatchRequest, context: Context
    ) -> AsyncIterator[admin_pb2.WatchResponse]:
        """A public snapshot, then events as they happen, then the result."""
        organiser = carries_token(context, self.organiser_token)
        async with stream_slot(self.slots, context, exempt=organiser):
            async for message in self._watch(request, context):
                yield message

    async def _watch(
        self, request: admin_pb2.WatchRequest, context: Context
    ) -> AsyncIterator[admin_pb2.WatchResponse]:
        hosted = await _find(self.arena, request.match_id, context)
        match = hosted.match
        watcher = _Watcher()
        _start, outcome = match.watch(watcher)
        snapshot = observe(match.view().state, None)  # public view: no supply but revealed ones
        yield matches.watch_snapshot(snapshot)
        if outcome is not None:
            yield matches.watch_result(outcome)
            return
        try:
            while True:
                message = await watcher.queue.get()
                if message is None:
                    return
                yield message
        finally:
            match.unwatch(watcher)
