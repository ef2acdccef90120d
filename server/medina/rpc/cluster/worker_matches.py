"""Where a multi-worker front's matches live (the ``MatchBackend`` of ``serve --workers N``):
created on the least-loaded worker, routed by match id, listings merged; earlier runs'
records and matches lost with a worker are the front's own (``FrontCatalog``).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence, Set
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import grpc

from medina.records import catalog
from medina.records.catalog import StoredMatch, StoredState
from medina.referee.config import MatchSettings
from medina.v1 import admin_pb2
from medina.wire import matches

from ..common.admission import MOST_PLAYERS, Load
from ..common.listing import SORT_KEYS_METADATA, Page, SortKey, decode_keys, merge, paginate
from ..common.match_service import (
    Admit,
    entry_summaries,
    recorded_page,
    refuse_ended,
    refuse_unknown,
)
from ..common.status import Reason, abort
from .routes import Route, Routes
from .workers import Worker, WorkerPool

Context = grpc.aio.ServicerContext[Any, Any]
T = TypeVar("T")
log = logging.getLogger("medina.rpc")

#: Seconds a forwarded organiser call may take at a worker (AbortMatch waits for the record).
CALL_TIMEOUT_S = 60.0
_ACTIVE = (admin_pb2.MATCH_STATE_WAITING, admin_pb2.MATCH_STATE_RUNNING)
#: The load a worker that did not say its own is taken to have: it is tried last.
UNKNOWN_LOAD = 1 << 30


class FrontCatalog:
    """Matches known only from their records: earlier runs' (read once at start, for every
    worker) and those lost with a worker that died, in one ``Catalog`` as a single server
    keeps its records, so that a record deleted under the server (``replay prune``) leaves
    the listing, its count and GetMatch the same way."""

    def __init__(self, records_dir: Path) -> None:
        self.records_dir = records_dir
        #: Every record the front answers for: an entry each, read back when asked.
        self.stored = catalog.Catalog(records_dir)
        #: The worker that died holding each interrupted lost match, for its note.
        self._died: dict[str, str] = {}

    def load(self) -> None:
        """Read the records directory (before any worker runs a match)."""
        self.stored.load()

    def __contains__(self, match_id: object) -> bool:
        return match_id in self.stored

    def get(self, match_id: str) -> StoredMatch | None:
        """A match known only from its record; None for any other, or when its record is
        gone (``Catalog.get``)."""
        stored = self.stored.get(match_id)
        if stored is None:
            self._died.pop(match_id, None)
            return None
        worker = self._died.get(match_id)
        return (
            stored
            if worker is None
            else dataclasses.replace(stored, note=_died(stored.note, worker))
        )

    def gone(self, match_id: str) -> bool:
        """Whether a match's record file is no longer there (``Catalog.gone``)."""
        return bool(self.stored.gone([match_id]))

    def page(
        self, states: Set[int], token: str, size: int
    ) -> tuple[list[tuple[SortKey, catalog.Entry]], int]:
        """The records a ListMatches page after ``token`` can show, with their keys, and how
        many the filter lets through (``match_service.recorded_page``); each is only its
        entry, read (``summaries``) if the merged page shows it."""
        return recorded_page(self.stored, states, token, size)

    async def summaries(self, listed: Sequence[catalog.Entry]) -> list[admin_pb2.MatchSummary]:
        """Listed records' summaries (``match_service.entry_summaries``: read off the event
        loop)."""
        found = await entry_summaries(self.stored, listed)
        for summary in found:
            worker = self._died.get(summary.match_id)
            if worker is not None:
                summary.note = _died(summary.note, worker)
        return found

    async def lost(self, match_ids: list[str], worker: str) -> int:
        """Matches of a worker that died: their records (read on a worker thread: replaying
        an interrupted record takes a while) join the catalog, the interrupted ones noted as
        interrupted by it; how many were."""
        interrupted = 0
        for stored in await asyncio.to_thread(self._inspect, match_ids, worker):
            self.stored.add(stored)
            if stored.state is StoredState.INTERRUPTED:
                self._died[stored.match_id] = worker
                interrupted += 1
        return interrupted

    def _inspect(self, match_ids: list[str], worker: str) -> list[StoredMatch]:
        found: list[StoredMatch] = []
        for match_id in match_ids:
            path = self.records_dir / f"{match_id}.jsonl"
            try:
                found.append(catalog.inspect(path))
            except OSError as exc:
                log.warning("match %s was lost with %s; no record: %s", match_id, worker, exc)
        return found


def _died(note: str, worker: str) -> str:
    """An interrupted record's note, saying which worker's death interrupted it."""
    said = "the server stopped"
    return note.replace(said, f"{worker} died", 1) if said in note else f"{note}; {worker} died"


class WorkerMatches:
    """The matches of a front's workers (a ``MatchBackend``), each answered by the worker
    that holds it; earlier runs' records and lost matches are the front's own."""

    def __init__(
        self,
        pool: WorkerPool,
        routes: Routes,
        records: FrontCatalog,
        *,
        public_host: str | None,
    ) -> None:
        self.pool = pool
        self.routes = routes
        self.records = records
        #: The host bots reach this server at, for CreateMatch's ``endpoint`` (the worker's
        #: own address for bots); None when it cannot be named (a wildcard listen address).
        self.public_host = public_host
        self.accepting = True

    async def create(
        self,
        request: admin_pb2.CreateMatchRequest,
        settings: MatchSettings,
        admit: Admit,
        context: Context,
    ) -> admin_pb2.CreateMatchResponse | None:
        """Create the match on the worker with the fewest matches waiting or running (the
        loop lag against the clocks in play is each worker's to weigh)."""
        if not self.accepting:
            await abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                Reason.SHUTTING_DOWN,
                "the server is shutting down and takes no new matches",
            )
        workers = self.pool.live()
        if not workers:
            await abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                Reason.NO_WORKER,
                "no worker process is running; try again shortly",
            )
        counted = await asyncio.gather(*(self._load(w) for w in workers))
        active = sum(n for n in counted if n is not None)
        # The front's own open files: a bot that does not follow redirects (protocol 1.0) is
        # forwarded over a connection to the front, so each match may hold one per seat here
        # (its record is its worker's); the seats of the workers' matches are not known, so
        # each counts as the most.
        load = Load(active, None, files=active * MOST_PLAYERS, new_files=settings.players)
        if not await admit(load):
            return None  # refused: the call's status says so
        # Counted now, with the creations other calls have under way (no await in between);
        # a worker that did not answer is tried last.
        loads = [UNKNOWN_LOAD if n is None else n for n in counted]
        order = sorted(
            range(len(workers)), key=lambda i: (loads[i] + workers[i].pending, workers[i].slot)
        )
        last: tuple[Worker, grpc.aio.AioRpcError] | None = None
        for i in order:
            worker = workers[i]
            worker.pending += 1
            try:
                created: admin_pb2.CreateMatchResponse = await worker.matches.CreateMatch(
                    request, metadata=worker.auth, timeout=CALL_TIMEOUT_S
                )
            except grpc.aio.AioRpcError as exc:
                # Busy (loop lag) or going away: the next worker may take it.
                if exc.code() not in (
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    grpc.StatusCode.UNAVAILABLE,
                ):
                    await relay(context, worker, exc)
                last = (worker, exc)
                continue
            finally:
                worker.pending -= 1
            route = Route(worker.slot, worker.generation)
            self.routes.add(created.match_id, (t.token for t in created.tokens), route)
            if self.public_host is not None and worker.bots_port is not None:
                created.endpoint = f"{self.public_host}:{worker.bots_port}"
            return created
        assert last is not None
        await relay(context, *last)

    async def _load(self, worker: Worker) -> int | None:
        """Matches waiting or running on a worker (None: it did not answer)."""
        try:
            page: admin_pb2.ListMatchesResponse = await worker.matches.ListMatches(
                matches.count_request(_ACTIVE),
                metadata=worker.auth,
                timeout=CALL_TIMEOUT_S,
            )
        except grpc.aio.AioRpcError:
            return None
        return page.total_size

    async def page(
        self, request: admin_pb2.ListMatchesRequest, states: Set[int], size: int, context: Context
    ) -> Page:
        """The workers' pages merged with the front's records, newest first."""
        own, total = self.records.page(states, request.page_token, size)
        pages = [paginate(own, size, request.page_token, total)]  # a bad token: before any call
        asked = copy.deepcopy(request)
        asked.page_size = size
        for worker, answer in await _ask_all(self.pool.live(), lambda w: _list(w, asked)):
            if isinstance(answer, grpc.aio.AioRpcError):
                if not worker.alive:
                    continue  # it died meanwhile: its matches are lost, listed once read
                await relay(context, worker, answer)
            page, worker_total = answer
            # A match lost with a dead worker is listed from its record here, not twice.
            keep = [i for i, key in enumerate(page.keys) if key[2] not in self.records]
            pages.append(
                Page(
                    items=[page.items[i] for i in keep],
                    next_token=page.next_token,
                    total=worker_total,
                    keys=[page.keys[i] for i in keep],
                )
            )
            total += worker_total
        merged = merge(pages, size, total)
        # The front's own records are read for the page only; the workers' come as summaries.
        own_items = [m for m in merged.items if isinstance(m, catalog.Entry)]
        read = iter(await self.records.summaries(own_items))
        shown = [next(read) if isinstance(m, catalog.Entry) else m for m in merged.items]
        return dataclasses.replace(merged, items=shown)

    def record(self, match_id: str) -> StoredMatch | None:
        """A match of an earlier run, or one lost with its worker (once its record is read)."""
        return self.records.get(match_id)

    async def get(self, match_id: str, context: Context) -> admin_pb2.MatchSummary:
        """One match, from the worker that holds it; NOT_FOUND for one lost with its worker
        whose record is gone (``replay prune``), as for any pruned match: nothing is left of
        it anywhere."""
        if self._lost_route(match_id) is not None and self.records.gone(match_id):
            await refuse_unknown(context, match_id)
        request = matches.get_request(match_id)

        async def ask(w: Worker) -> admin_pb2.GetMatchResponse:
            answer: admin_pb2.GetMatchResponse = await w.matches.GetMatch(
                request, metadata=w.auth, timeout=CALL_TIMEOUT_S
            )
            return answer

        return (await self._routed(match_id, context, ask)).match

    async def abort(
        self, request: admin_pb2.AbortMatchRequest, context: Context
    ) -> admin_pb2.MatchSummary:
        """Abort a match at the worker that holds it."""
        await self._known(request.match_id, context)

        async def ask(w: Worker) -> admin_pb2.AbortMatchResponse:
            answer: admin_pb2.AbortMatchResponse = await w.matches.AbortMatch(
                request, metadata=w.auth, timeout=CALL_TIMEOUT_S
            )
            return answer

        return (await self._routed(request.match_id, context, ask)).match

    async def forfeit(
        self, request: admin_pb2.ForfeitSeatRequest, context: Context
    ) -> admin_pb2.ForfeitSeatResponse:
        """Forfeit a seat at the worker that holds its match (which answers as a
        single-process server does)."""
        worker = await self.locate(request.match_id, context)
        try:
            answer: admin_pb2.ForfeitSeatResponse = await worker.matches.ForfeitSeat(
                request, metadata=worker.auth, timeout=CALL_TIMEOUT_S
            )
        except grpc.aio.AioRpcError as exc:
            await relay(context, worker, exc)
        return answer

    def _lost_route(self, match_id: str) -> Route | None:
        """The route of a match whose worker died; None for any other."""
        route = self.routes.match(match_id)
        if route is not None and self.pool.find(route.slot, route.generation) is None:
            return route
        return None

    async def refuse_lost(self, match_id: str, context: Context) -> None:
        """UNAVAILABLE, naming the worker, for a match whose worker died."""
        route = self._lost_route(match_id)
        if route is not None:
            await abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                Reason.WORKER_LOST,
                f"match {match_id} was lost: {self.pool.describe(route.slot, route.generation)}, "
                "which held it, died; its record ends where it stopped",
                match_id=match_id,
            )

    async def _known(self, match_id: str, context: Context) -> None:
        """Ends the call for a match that was lost with its worker, or of which only the
        record remains."""
        await self.refuse_lost(match_id, context)
        stored = self.records.get(match_id)
        if stored is not None:
            await refuse_ended(context, match_id, stored.state.value)

    async def locate(self, match_id: str, context: Context) -> Worker:
        """The worker holding a match (a live one first, then one that remembers it);
        aborts as that worker would (NOT_FOUND when none knows it)."""
        await self._known(match_id, context)
        route = self.routes.match(match_id)
        if route is not None:
            worker = self.pool.find(route.slot, route.generation)
            assert worker is not None  # refuse_lost aborted otherwise
            return worker
        request = matches.get_request(match_id)
        answers = await _ask_all(
            self.pool.live(),
            lambda w: w.matches.GetMatch(request, metadata=w.auth, timeout=CALL_TIMEOUT_S),
        )
        worker, _found = await _pick(context, answers)
        return worker

    async def _routed(
        self, match_id: str, context: Context, ask: Callable[[Worker], Awaitable[T]]
    ) -> T:
        await self.refuse_lost(match_id, context)
        route = self.routes.match(match_id)
        if route is not None:
            worker = self.pool.find(route.slot, route.generation)
            assert worker is not None  # refuse_lost aborted otherwise
            answers = await _ask_all([worker], ask)
        else:
            answers = await _ask_all(self.pool.live(), ask)
        _worker, best = await _pick(context, answers)
        return best


async def _list(worker: Worker, request: admin_pb2.ListMatchesRequest) -> tuple[Page, int]:
    call = worker.matches.ListMatches(
        request, metadata=(*worker.auth, (SORT_KEYS_METADATA, "1")), timeout=CALL_TIMEOUT_S
    )
    answer: admin_pb2.ListMatchesResponse = await call
    keys: list[SortKey] = []
    for key, value in await call.trailing_metadata() or ():
        if key == SORT_KEYS_METADATA and isinstance(value, str):
            keys = decode_keys(value)
    if len(keys) != len(answer.matches):
        raise RuntimeError(f"worker {worker.slot} sent {len(keys)} sort keys for a page")
    page = Page(list(answer.matches), answer.next_page_token, answer.total_size, keys)
    return page, answer.total_size


async def _ask_all(
    workers: list[Worker], ask: Callable[[Worker], Awaitable[T]]
) -> list[tuple[Worker, T | grpc.aio.AioRpcError]]:
    """Every worker's answer or error, in worker order."""

    async def one(w: Worker) -> T | grpc.aio.AioRpcError:
        try:
            return await ask(w)
        except grpc.aio.AioRpcError as exc:
            return exc

    answers = await asyncio.gather(*(one(w) for w in workers))
    return list(zip(workers, answers, strict=True))


#: Which error says most when several workers were asked about a match (lower first).
_ERROR_RANK = {
    grpc.StatusCode.FAILED_PRECONDITION: 0,
    grpc.StatusCode.UNAVAILABLE: 2,
    grpc.StatusCode.NOT_FOUND: 3,
}


async def _pick(
    context: Context, answers: list[tuple[Worker, T | grpc.aio.AioRpcError]]
) -> tuple[Worker, T]:
    """The answer of the worker holding the match: a live one's, then one known from its
    record; else the call ends with the most telling error (NOT_FOUND when nobody knows it)."""
    if not answers:
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            Reason.NO_WORKER,
            "no worker process is running; try again shortly",
        )

    def rank(item: tuple[Worker, Any]) -> int:
        answer = item[1]
        if isinstance(answer, grpc.aio.AioRpcError):
            return 10 + _ERROR_RANK.get(answer.code(), 1)
        return 1 if answer.match.from_record else 0

    worker, best = min(answers, key=rank)
    if isinstance(best, grpc.aio.AioRpcError):
        await relay(context, worker, best)
    return worker, best


async def lost_under(context: Context, worker: Worker, exc: asyncio.CancelledError) -> NoReturn:
    """After ``exc`` from a call to ``worker``: end this call ``worker_lost`` when the exc is
    the front closing the dead worker's channel (grpc.aio raises a cancellation, not an error
    status, from a call the channel's closing cancels); re-raise it when this handler itself
    is being cancelled."""
    task = asyncio.current_task()
    if worker.alive or (task is not None and task.cancelling()):
        raise exc
    await worker_lost(context, worker)


async def worker_lost(context: Context, worker: Worker, detail: str = "") -> NoReturn:
    """End the call UNAVAILABLE (WORKER_LOST), naming the worker that died under it."""
    await abort(
        context,
        grpc.StatusCode.UNAVAILABLE,
        Reason.WORKER_LOST,
        f"{worker.name} died: {detail}" if detail else f"{worker.name} died",
        worker=worker.name,
    )
    raise AssertionError("abort returned")


def pass_on(context: Context, worker: Worker, exc: grpc.aio.AioRpcError) -> bool:
    """Set the status the worker ended a call with as this call's, for the handler to
    return with (a refusal anyone can ask for, such as an unknown seat token's: nothing
    raised, see ``status.Refused``); False when the worker went away (``relay`` names it)."""
    if not worker.alive and exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return False
    context.set_code(exc.code())
    context.set_details(exc.details() or "")
    context.set_trailing_metadata(tuple(exc.trailing_metadata() or ()))
    return True


async def relay(context: Context, worker: Worker, exc: grpc.aio.AioRpcError) -> NoReturn:
    """End the call as the worker ended it; a worker that went away is named."""
    details = exc.details() or ""
    code = exc.code()
    if not worker.alive and code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        # Whether the dropped connection or the front's own clean-up of the dead worker's
        # calls (CANCELLED) came first, the client's answer is the same: the worker is gone.
        await worker_lost(context, worker, details)
    # The worker's trailers carry its status details (the ErrorInfo) to the client.
    await context.abort(code, details, tuple(exc.trailing_metadata() or ()))
    raise AssertionError("abort returned")
