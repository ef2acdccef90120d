"""MatchService (organisers), written once for every kind of server: the organiser
credential, request ids, the configuration's validation, admission control, the listing's
request and answer, and the errors every server gives alike.

Where the matches live is a ``MatchBackend``: this process's ``Arena`` (the single-process
server, ``single/local_matches.py``) or the worker processes of ``serve --workers N`` (the
front, ``cluster/worker_matches.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence, Set
from typing import Any, NoReturn, Protocol

import grpc

from medina.records.catalog import Catalog, Entry, StoredMatch, StoredState
from medina.referee.config import MatchSettings
from medina.referee.errors import ConfigError
from medina.v1 import admin_pb2, admin_pb2_grpc
from medina.wire import convert, matches

from .admission import AdmissionLimits, Load, LoopLag, RetryHint, ServerFullError, refusal
from .auth import require_organiser
from .idempotency import CreatedMatches, create_once
from .listing import (
    SORT_KEYS_METADATA,
    ListingError,
    Page,
    SortKey,
    decode_token,
    encode_keys,
    page_size,
)
from .status import Reason, abort, refuse

__all__ = [
    "ORGANISER_FORFEIT",
    "STORED_STATE",
    "Admit",
    "MatchBackend",
    "MatchService",
    "entry_summaries",
    "entry_summary",
    "forfeit_detail",
    "recorded_page",
    "refuse_ended",
    "refuse_over",
    "refuse_seat",
    "refuse_unknown",
    "stored_summary",
]

Context = grpc.aio.ServicerContext[Any, Any]
log = logging.getLogger("medina.rpc")


#: How a match known only from its record is listed.
STORED_STATE = {
    StoredState.FINISHED: admin_pb2.MATCH_STATE_FINISHED,
    StoredState.ABORTED: admin_pb2.MATCH_STATE_ABORTED,
    StoredState.ABANDONED: admin_pb2.MATCH_STATE_ABANDONED,
    StoredState.INTERRUPTED: admin_pb2.MATCH_STATE_ABORTED,
    StoredState.UNREADABLE: admin_pb2.MATCH_STATE_ABORTED,
}


def stored_summary(stored: StoredMatch) -> admin_pb2.MatchSummary:
    """What the organiser sees of a match known only from its record."""
    return matches.recorded_summary(
        match_id=stored.match_id,
        state=STORED_STATE[stored.state],
        decisions=stored.decisions,
        record_path=str(stored.path),
        note=stored.note,
        header=stored.header,
        result=stored.result,
    )


def recorded_key(entry: Entry) -> SortKey:
    """A record's place in the listing: after this run's matches, newest file first."""
    return (0, entry.mtime, entry.match_id)


def recorded_page(
    records: Catalog, states: Set[int], token: str, size: int
) -> tuple[list[tuple[SortKey, Entry]], int]:
    """The records a ListMatches page after ``token`` can show (at most ``size + 1``, newest
    first, filtered by ``states``; empty: every state), with their sort keys, and how many
    records the filter lets through: the catalog's order, so a page never sorts the
    directory. ListingError for a token no listing gave."""
    after = decode_token(token)
    wanted = frozenset(s for s, state in STORED_STATE.items() if int(state) in states)
    if states and not wanted:
        return [], 0
    before = None if after is None or after[0] > 0 else (after[1], after[2])
    found = records.newest(size + 1, before, wanted)
    # Records deleted under the server (``replay prune``) leave the listing and its count
    # here, rather than show as unreadable: a page checks that its own files are there.
    while gone := records.gone(e.match_id for e in found):
        records.forget(gone)
        found = records.newest(size + 1, before, wanted)
    return [(recorded_key(e), e) for e in found], records.count(wanted)


async def entry_summaries(
    records: Catalog, entries: Sequence[Entry]
) -> list[admin_pb2.MatchSummary]:
    """The summaries of listed records (``entry_summary``); the records not in the cache
    are read on a worker thread, so a page of old records never stalls the event loop
    that clocks the matches."""
    missing = records.uncached(e.match_id for e in entries)
    if missing:
        records.accept(await asyncio.to_thread(records.read, missing))
    return [entry_summary(records, e) for e in entries]


def entry_summary(records: Catalog, entry: Entry) -> admin_pb2.MatchSummary:
    """A listed record's summary, read back from it (a record that went away between the
    listing and the read is listed as unreadable)."""
    stored = records.get(entry.match_id)
    if stored is None:
        stored = StoredMatch(
            entry.match_id,
            records.directory / f"{entry.match_id}.jsonl",
            StoredState.UNREADABLE,
            None,
            0,
            None,
            "the record went away",
            entry.mtime,
        )
    return stored_summary(stored)


async def refuse_unknown(context: Context, match_id: str) -> NoReturn:
    """NOT_FOUND (MATCH_NOT_FOUND) for a match this server knows nothing of (never created
    here, or its record deleted)."""
    await abort(
        context,
        grpc.StatusCode.NOT_FOUND,
        Reason.MATCH_NOT_FOUND,
        f"no match with id {match_id!r}",
        match_id=match_id,
    )


async def refuse_ended(context: Context, match_id: str, state: str) -> NoReturn:
    """FAILED_PRECONDITION (MATCH_ENDED) for a match of which only the record remains."""
    await abort(
        context,
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.MATCH_ENDED,
        f"match {match_id} has ended ({state}); only its record remains",
        match_id=match_id,
        state=state,
    )


#: The longest reason AbortMatch and ForfeitSeat take, in characters: it is written into
#: every seat's result and answered by every GetMatch and ListMatches after, so a reason of
#: megabytes made those answers larger than gRPC sends, for good.
MAX_REASON_CHARS = 500


async def check_reason(context: Context, reason: str) -> None:
    """INVALID_ARGUMENT (REQUEST_INVALID) for a reason longer than ``MAX_REASON_CHARS``."""
    if len(reason) > MAX_REASON_CHARS:
        await abort(
            context,
            grpc.StatusCode.INVALID_ARGUMENT,
            Reason.REQUEST_INVALID,
            f"reason is {len(reason)} characters long; at most {MAX_REASON_CHARS} are kept "
            "in a match's result: say it shorter",
            limit=MAX_REASON_CHARS,
        )


#: A ForfeitSeat without a reason: the detail it starts with.
ORGANISER_FORFEIT = "the organiser forfeited the seat"


def forfeit_detail(reason: str, ever_connected: bool) -> str:
    """A seat's termination detail when ForfeitSeat forfeits it: the reason, then whether a
    bot had taken the seat up (``its bot exited with code 1 during the match``)."""
    when = " during the match" if ever_connected else " before connecting"
    return f"{reason or ORGANISER_FORFEIT}{when}"


async def refuse_seat(context: Context, match_id: str, seat: int, players: int | None) -> NoReturn:
    """INVALID_ARGUMENT (REQUEST_INVALID) for a seat the match does not have."""
    seats = f"; its seats are 0..{players - 1}" if players is not None else ""
    await abort(
        context,
        grpc.StatusCode.INVALID_ARGUMENT,
        Reason.REQUEST_INVALID,
        f"match {match_id} has no seat {seat}{seats}",
        match_id=match_id,
        seat=seat,
    )


async def refuse_over(context: Context, match_id: str) -> NoReturn:
    """FAILED_PRECONDITION (MATCH_ENDED) for a match in memory that has ended."""
    await abort(
        context,
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.MATCH_ENDED,
        f"match {match_id} has ended",
        match_id=match_id,
    )


#: Admission control's verdict on a load: True when the match may be created; False when it
#: was refused (the call's status is set: the backend returns without creating it).
Admit = Callable[[Load], Awaitable[bool]]


class MatchBackend(Protocol):
    """Where a server's matches live. Every method may end the call (``abort``)."""

    async def create(
        self,
        request: admin_pb2.CreateMatchRequest,
        settings: MatchSettings,
        admit: Admit,
        context: Context,
    ) -> admin_pb2.CreateMatchResponse | None:
        """Create the match (its configuration is valid), once ``admit`` has accepted the
        load it would be created under; None when ``admit`` refused it (the call's status is
        set). Ends the call when no match can be created at all (the server is shutting
        down, no worker runs)."""
        ...

    async def page(
        self, request: admin_pb2.ListMatchesRequest, states: Set[int], size: int, context: Context
    ) -> Page:
        """A page of ``MatchSummary`` in the listing's order, with their sort keys; raises
        ListingError for a page token that is not one."""
        ...

    def record(self, match_id: str) -> StoredMatch | None:
        """A match known only from its record, read back; None when there is none."""
        ...

    async def get(self, match_id: str, context: Context) -> admin_pb2.MatchSummary:
        """A match not known from a record alone; ends the call when there is none."""
        ...

    async def abort(
        self, request: admin_pb2.AbortMatchRequest, context: Context
    ) -> admin_pb2.MatchSummary:
        """Abort a match and wait until its record is complete."""
        ...

    async def forfeit(
        self, request: admin_pb2.ForfeitSeatRequest, context: Context
    ) -> admin_pb2.ForfeitSeatResponse:
        """Forfeit a seat whose program is gone (CRASHED, the detail as ``forfeit_detail``
        makes it); OK with an empty detail for a seat that had already forfeited. Ends the
        call for a seat out of range (REQUEST_INVALID) or a match that has ended
        (MATCH_ENDED)."""
        ...


class MatchService(admin_pb2_grpc.MatchServiceServicer):
    """Creating, listing and aborting matches and forfeiting seats, wherever they live."""

    def __init__(
        self,
        backend: MatchBackend,
        organiser_token: str | None,
        admission: AdmissionLimits | None = None,
        lag: LoopLag | None = None,
    ) -> None:
        self.backend = backend
        self.token = organiser_token
        self.admission = admission or AdmissionLimits(max_loop_lag_ms=None)
        self.lag = lag or LoopLag()
        #: Answers by request id: a retry gets the match the first call created.
        self.created = CreatedMatches()
        #: CreateMatch calls refused by admission control.
        self.refused = 0
        #: The wait a refusal asks for: longer while many organisers are waiting.
        self.hint = RetryHint(self.admission.retry_after_ms)

    async def CreateMatch(
        self, request: admin_pb2.CreateMatchRequest, context: Context
    ) -> admin_pb2.CreateMatchResponse:
        """Create a match from a configuration (once per request id)."""
        await require_organiser(context, self.token)
        created = await create_once(
            self.created, request, context, lambda: self._create(request, context)
        )
        # Refused: the status is set, and grpc sends it instead of this empty response.
        return matches.not_created() if created is None else created

    async def _create(
        self, request: admin_pb2.CreateMatchRequest, context: Context
    ) -> admin_pb2.CreateMatchResponse | None:
        try:
            settings = convert.settings_from_proto(request.config)
        except ConfigError as exc:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                Reason.MATCH_CONFIG_INVALID,
                f"bad match config: {exc}",
            )
        try:
            return await self.backend.create(
                request, settings, lambda load: self._admit(load, context), context
            )
        except ServerFullError as exc:
            self._refuse(str(exc), context)
            return None

    async def _admit(self, load: Load, context: Context) -> bool:
        """Whether admission lets a match with ``load`` in; if not, the call's status is set
        to RESOURCE_EXHAUSTED (SERVER_FULL, with a retry hint) and the backend returns."""
        refused = refusal(self.admission, load, self.lag.ms)
        if refused is None:
            self.hint.admitted()
            return True
        self._refuse(refused, context)
        return False

    def _refuse(self, refused: str, context: Context) -> None:
        """Set the call's status to RESOURCE_EXHAUSTED (SERVER_FULL) saying ``refused``, with
        a retry hint, and count the refusal."""
        self.refused += 1
        self.hint.refused()
        log.info("CreateMatch refused: %s", refused)
        refuse(
            context,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            Reason.SERVER_FULL,
            refused,
            retry_after_ms=self.hint.ms(),
        )

    async def ListMatches(
        self, request: admin_pb2.ListMatchesRequest, context: Context
    ) -> admin_pb2.ListMatchesResponse:
        """A page of matches, newest first, optionally only those in some states."""
        await require_organiser(context, self.token)
        states = {int(s) for s in request.states}
        try:
            unknown = sorted(states - set(admin_pb2.MatchState.values()))
            if unknown:
                # An empty page would read as "no such match", not as a filter mistyped.
                raise ListingError(
                    f"states {', '.join(map(str, unknown))}: not a MatchState this server "
                    f"knows (0..{max(admin_pb2.MatchState.values())})"
                )
            size = page_size(request.page_size if request.HasField("page_size") else None)
            page = await self.backend.page(request, states, size, context)
        except ListingError as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, Reason.REQUEST_INVALID, str(exc))
        if _wants_keys(context):
            context.set_trailing_metadata(((SORT_KEYS_METADATA, encode_keys(page.keys)),))
        return matches.listed(page.items, page.next_token, page.total)

    async def GetMatch(
        self, request: admin_pb2.GetMatchRequest, context: Context
    ) -> admin_pb2.GetMatchResponse:
        """One match."""
        await require_organiser(context, self.token)
        stored = self.backend.record(request.match_id)
        if stored is not None:
            return matches.found(stored_summary(stored))
        return matches.found(await self.backend.get(request.match_id, context))

    async def AbortMatch(
        self, request: admin_pb2.AbortMatchRequest, context: Context
    ) -> admin_pb2.AbortMatchResponse:
        """Abort a match and wait until its record is complete."""
        await require_organiser(context, self.token)
        await check_reason(context, request.reason)
        return matches.aborted(await self.backend.abort(request, context))

    async def ForfeitSeat(
        self, request: admin_pb2.ForfeitSeatRequest, context: Context
    ) -> admin_pb2.ForfeitSeatResponse:
        """The program playing a seat is gone (its process exited): the seat forfeits now
        (CRASHED) rather than after its reconnect grace or connect deadline. The one way a
        bot process's exit reaches the referee, whether the organiser runs the server in
        its own process or reaches it over the network."""
        await require_organiser(context, self.token)
        await check_reason(context, request.reason)
        if request.seat < 0:
            await refuse_seat(context, request.match_id, request.seat, None)
        stored = self.backend.record(request.match_id)
        if stored is not None:
            await refuse_ended(context, request.match_id, stored.state.value)
        return await self.backend.forfeit(request, context)


def _wants_keys(context: Context) -> bool:
    """Whether the caller (a multi-worker front merging pages) asked for the sort keys."""
    return any(key == SORT_KEYS_METADATA for key, _ in context.invocation_metadata() or ())
