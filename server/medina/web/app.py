"""The viewer's ASGI app (Starlette): pages, JSON, the live event stream and /metrics.

Read-only: every route answers GET (and HEAD) only, and none changes anything. Creating or
aborting a match stays with the organiser's gRPC calls, behind the organiser credential.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from medina.records import catalog
from medina.records.catalog import StoredMatch, StoredState
from medina.rpc.common.limits import ClientSlots, StreamSlotsExhausted
from medina.wire.shared.enums import RULESET_NAMES

from . import pages
from .builds import BuildUnavailableError
from .fanout import KEEPALIVE_FRAME, FanOut, Live
from .listing import BadQueryError, Listing, MatchRow, Query
from .live import KEEPALIVE_S
from .metrics import CONTENT_TYPE_LATEST, Metrics
from .names import isolated
from .shelf import RecordShelf, UnknownRecordError
from .source import Feed, MatchSource
from .standings import StandingsProvider
from .view import JSON

log = logging.getLogger("medina.web")

T = TypeVar("T")

STATIC = Path(__file__).resolve().parent / "static"

#: Sent with every response: scripts and styles only from this server, nothing framed, no
#: base URL or form target an injected tag could set (default-src covers neither).
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass
class Viewer:
    """What the pages read: a records directory, and where matches are played live."""

    records: RecordShelf
    #: Where live matches are found, in order: this process's arena (``hosted.ArenaSource``)
    #: or another server (``web --server``: ``remote.RemoteArena``). A match id two sources
    #: know is the first one's.
    sources: tuple[MatchSource, ...] = ()
    metrics: Metrics = field(default_factory=Metrics)
    standings: StandingsProvider | None = None
    keepalive_s: float = KEEPALIVE_S
    #: Open streams per client address, shared with the gRPC server's Play and Watch
    #: streams (its --max-streams-per-client); None: no limit.
    slots: ClientSlots | None = None
    #: The streams of the matches pages follow: one per match, shared by its pages.
    fanout: FanOut = field(default_factory=FanOut)

    async def live_rows(self) -> list[MatchRow]:
        """The rows of every source's matches, each source's newest first."""
        rows: list[MatchRow] = []
        for source in self.sources:
            ids = {r.match_id for r in rows}
            rows += [r for r in await source.rows() if r.match_id not in ids]
        return rows

    async def has_live_page(self, match_id: str) -> bool:
        """Whether some source has a live page for ``match_id``."""
        for source in self.sources:
            if await source.has_live_page(match_id):
                return True
        return False

    async def feed(self, match_id: str) -> Feed | None:
        """The live stream of ``match_id`` from the first source that knows it."""
        for source in self.sources:
            feed = await source.feed(match_id)
            if feed is not None:
                return feed
        return None

    async def live(self, match_id: str) -> Live | None:
        """A page's live stream of ``match_id``: the one other pages of it follow, or the
        first source's that knows it (``fanout``); None when no source knows it."""
        if self.fanout.following(match_id):
            return self.fanout.live(match_id, None)
        feed = await self.feed(match_id)
        return self.fanout.live(match_id, feed) if feed is not None else None

    async def listing(self, query: Query) -> Listing:
        """One page of the matches list: the matches hosted here (and by a watched
        server: every source's) first, newest first, then the other records, newest first; only the
        records the page shows are read, on a worker thread (a directory of many records
        never stalls the event loop)."""
        live = await self.live_rows()
        exclude = frozenset(r.match_id for r in live)
        if query.states:
            live = [r for r in live if r.state in query.states]
        rows = live[query.skip : query.skip + query.per]
        part = await asyncio.to_thread(
            self.records.page,
            max(0, query.skip - len(live)),
            query.per - len(rows),
            query.states,
            exclude,
        )
        rows += [self.stored_row(m) for m in part.matches]
        total = len(live) + part.total if part.total is not None else None
        more = part.more or query.skip + query.per < len(live)
        return Listing(rows, query, total, more)

    def stored_row(self, stored: StoredMatch) -> MatchRow:
        """The row of a record."""
        header = stored.header
        config = stored.config
        return MatchRow(
            match_id=stored.match_id,
            ruleset=RULESET_NAMES.get(int(config.ruleset), "?") if config else "?",
            players=config.players if config is not None else 0,
            bots=(
                catalog.seat_labels(header.config, header.seats, config.players)
                if header and config
                else []
            ),
            state=stored.state.value,
            decisions=stored.decisions,
            scores=[s.total for s in stored.result.seats] if stored.result else None,
            live=False,
            record=self.records.id_of(stored.path),
            note=self.records.public(stored.note),
        )


class _WholeRest(PathConvertor):
    """The rest of a path, whatever it holds: Starlette's ``path`` (``.*``) stops at a
    newline."""

    regex = "(?s:.*)"


#: The name the route of a bot's page gives its convertor (Starlette keeps them by name).
WHOLE_REST = "medina_whole_rest"
register_url_convertor(WHOLE_REST, _WholeRest())


def _viewer(request: Request) -> Viewer:
    viewer: Viewer = request.app.state.viewer
    return viewer


#: How often the matches page asks whether its page changed (milliseconds).
REFRESH_MS = 3000


async def _listing(request: Request, *, page: bool) -> Listing | Response:
    """The page of the list a request asks for; a 400 naming a bad parameter (an HTML page
    for the ``page``, else JSON ``{"error": ...}`` as the rest of the API answers)."""
    try:
        query = Query.parse(request.query_params)
    except BadQueryError as exc:
        if page:
            return HTMLResponse(pages.bad_request_page(str(exc)), status_code=400)
        return JSONResponse({"error": str(exc)}, status_code=400)
    return await _viewer(request).listing(query)


def _unchanged(
    request: Request, etag: str, headers: dict[str, str] | None = None
) -> Response | None:
    """A 304 when the client already has this version of the page."""
    if etag in {t.strip() for t in request.headers.get("if-none-match", "").split(",")}:
        return Response(
            status_code=304, headers={"ETag": etag, "Cache-Control": "no-cache", **(headers or {})}
        )
    return None


#: Made anew by each process: an entity tag one process gave is never taken for another's
#: (a new version of the viewer may make a record's replay differently).
PROCESS_TAG = secrets.token_hex(4)


def _record_etag(version: str, representation: str) -> str:
    """The entity tag of one representation of a record at ``version`` (shelf.version)."""
    return f'"{version}-{representation}-{PROCESS_TAG}"'


async def matches(request: Request) -> Response:
    listing = await _listing(request, page=True)
    if isinstance(listing, Response):
        return listing
    etag = listing.etag()
    unchanged = _unchanged(request, etag)
    if unchanged is not None:
        return unchanged
    return HTMLResponse(
        pages.matches_page(listing, etag, REFRESH_MS),
        headers={"ETag": etag, "Cache-Control": "no-cache"},
    )


async def matches_json(request: Request) -> Response:
    listing = await _listing(request, page=False)
    if isinstance(listing, Response):
        return listing
    etag = listing.etag()
    unchanged = _unchanged(request, etag)
    if unchanged is not None:
        return unchanged
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    links = []
    if listing.more:
        links.append(
            f'<{listing.query.link("/api/matches", page=listing.query.page + 1)}>; rel="next"'
        )
    if listing.newer is not None:
        links.append(f'<{listing.query.link("/api/matches", page=listing.newer)}>; rel="prev"')
    if links:
        headers["Link"] = ", ".join(links)
    if listing.total is not None:
        headers["X-Total-Count"] = str(listing.total)
    return JSONResponse(
        [
            {
                "match_id": r.match_id,
                "ruleset": r.ruleset,
                "players": r.players,
                "bots": list(r.bots),
                "state": r.state,
                "decisions": r.decisions,
                "scores": list(r.scores) if r.scores is not None else None,
                "live": f"/live/{r.match_id}" if r.live else None,
                "replay": f"/replay/{r.record}" if r.record is not None else None,
                "note": r.note,
            }
            for r in listing.rows
        ],
        headers=headers,
    )


def _not_found(message: str) -> Response:
    return HTMLResponse(pages.not_found_page(message), status_code=404)


async def live(request: Request) -> Response:
    viewer = _viewer(request)
    match_id = request.path_params["match_id"]
    if not await viewer.has_live_page(match_id):
        try:
            viewer.records.path_of(match_id)
        except UnknownRecordError:
            return _not_found(f"no match {match_id!r} is hosted here, and no record has its id")
        return RedirectResponse(f"/replay/{match_id}", status_code=303)
    return HTMLResponse(pages.live_page(match_id))


async def live_events(request: Request) -> Response:
    viewer = _viewer(request)
    match_id = request.path_params["match_id"]
    follow = await viewer.live(match_id)
    if follow is None:
        return JSONResponse(await _gone(viewer, match_id), status_code=404)
    gauge = viewer.metrics.event_streams
    slots = viewer.slots if viewer.slots is not None else ClientSlots(0)
    try:
        client = slots.take(request.client.host if request.client else "unknown")
    except StreamSlotsExhausted as exc:
        return JSONResponse({"error": str(exc)}, status_code=429)

    async def stream() -> AsyncIterator[bytes]:
        gauge.inc()
        try:
            async with contextlib.aclosing(follow(viewer.keepalive_s)) as messages:
                async for message in messages:
                    yield KEEPALIVE_FRAME if message is None else message.frame
        finally:
            gauge.dec()
            slots.release(client)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _gone(viewer: Viewer, match_id: str) -> JSON:
    """Why a match has no live stream here, for its page: the error, and when the records
    directory has the match's record, how that record ended and its replay."""
    out: JSON = {"error": f"no match {match_id!r} is hosted here"}
    stored = await asyncio.to_thread(viewer.records.stored, match_id)
    if stored is None:
        return out
    state = stored.state
    ended = {
        StoredState.FINISHED: "it has finished",
        StoredState.ABORTED: "it was aborted",
        StoredState.ABANDONED: "it was abandoned: no bot ever connected",
        StoredState.UNREADABLE: "its record cannot be read",
    }
    # A record with no outcome line may be a match another server is playing into this
    # directory: not "interrupted", which the file alone cannot tell.
    error = (
        f"match {match_id!r} is not hosted here; its record is {catalog.UNFINISHED}"
        if state is StoredState.INTERRUPTED
        else f"match {match_id!r} is not being played here any more: {ended[state]}"
    )
    out.update(
        error=error,
        state=state.value,  # "interrupted" as before: programs read it
        replay=f"/replay/{match_id}" if state is not StoredState.UNREADABLE else None,
    )
    return out


async def record_file(request: Request) -> Response:
    """The record as the arena wrote it (JSON lines), to download."""
    viewer = _viewer(request)
    record_id = request.path_params["record_id"]
    try:
        path = viewer.records.path_of(record_id)
        etag = _record_etag(viewer.records.version(record_id), "jsonl")
    except UnknownRecordError as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
    unchanged = _unchanged(request, etag)
    if unchanged is not None:
        return unchanged
    return FileResponse(
        path,
        media_type="application/x-ndjson",
        filename=f"{record_id}.jsonl",
        headers={"Cache-Control": "no-cache", "ETag": etag},
    )


async def replay(request: Request) -> Response:
    viewer = _viewer(request)
    record_id = request.path_params["record_id"]
    try:
        viewer.records.path_of(record_id)
    except UnknownRecordError as exc:
        return _not_found(str(exc))
    # A record the list shows as unreadable (or empty) gets its reason alone: the replay's
    # controls and board would stand empty, and the page's request for its data fail.
    stored = await asyncio.to_thread(viewer.records.stored, record_id)
    if stored is not None and stored.header is None:
        why = viewer.records.public(stored.note)
        return HTMLResponse(pages.unreplayable_page(record_id, why))
    return HTMLResponse(pages.replay_page(record_id))


#: Seconds a client is told to wait (``Retry-After``) before asking again for a replay that
#: could not be built now.
RETRY_AFTER_S = 5
#: The status of a request whose client went away before its answer was ready.
CLIENT_GONE = 499


async def _disconnected(request: Request) -> None:
    """Returns once the client has closed its connection. For a GET the request's (empty) body
    is all there is to receive before: uvicorn answers ``http.disconnect`` when the connection
    is lost (or once the response is sent)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _unless_gone(request: Request, work: Coroutine[Any, Any, T]) -> T | None:
    """What ``work`` returns, or None when the client goes away first: ``work`` is cancelled
    then. uvicorn never cancels a handler whose client left, so a replay nobody would read
    was kept queued for the builder (600 requests dropped after a second kept it busy 27 s)."""
    job = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({job, gone}, return_when=asyncio.FIRST_COMPLETED)
        return job.result() if job.done() else None
    finally:
        job.cancel()
        gone.cancel()
        # Their ends retrieved (an error left unread would be logged), this handler's own
        # cancellation still raised after.
        await asyncio.gather(job, gone, return_exceptions=True)


async def replay_json(request: Request) -> Response:
    viewer = _viewer(request)
    record_id = request.path_params["record_id"]
    gzip = "gzip" in request.headers.get("accept-encoding", "")
    representation = "gzip" if gzip else "json"
    headers = {"Vary": "Accept-Encoding", "Cache-Control": "no-cache"}
    try:
        etag = _record_etag(viewer.records.version(record_id), representation)
        # A finished match's replay never changes: asked again, it is a 304 with no body.
        unchanged = _unchanged(request, etag, headers)
        if unchanged is not None:
            return unchanged
        made = await _unless_gone(request, viewer.records.replay_bytes(record_id, gzip))
    except UnknownRecordError as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
    except BuildUnavailableError as exc:
        # Busy, its builder dead or the viewer stopping: worth asking again shortly.
        return JSONResponse(
            {"error": str(exc)},
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-store"},
        )
    if made is None:
        # Nobody reads it: nginx's "client closed request", for whoever looks.
        return Response(status_code=CLIENT_GONE)
    version, body = made
    headers["ETag"] = _record_etag(version, representation)
    if gzip:
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type="application/json", headers=headers)


#: ``/standings?all=``: every row (the revoked and suspended too), or those that may play.
SHOW_ALL = {"1": True, "0": False}


async def standings(request: Request) -> Response:
    provider = _viewer(request).standings
    asked = request.query_params.get("all", "0")
    if asked not in SHOW_ALL:
        message = f"all must be 1 (every row, the revoked and suspended too) or 0, got {asked!r}"
        return HTMLResponse(pages.bad_request_page(message), status_code=400)
    if provider is None:
        return HTMLResponse(pages.standings_page(None))

    # The provider reads a database (a ladder's, as it plays): never on the event loop the
    # viewer may share with the referee.
    def page() -> str:
        return pages.standings_page(provider(), show_all=SHOW_ALL[asked])

    return HTMLResponse(await asyncio.to_thread(page))


async def bot(request: Request) -> Response:
    viewer = _viewer(request)
    name = request.path_params["bot"]
    provider = viewer.standings
    if provider is None:
        return _not_found("no tournament database is configured")

    def page() -> Response:
        table = provider()
        if name not in table.games:
            return _not_found(f"no bot {isolated(repr(name))} in {table.title}")
        games = table.games[name]
        replayable = {g.match_id for g in games if viewer.records.has(g.match_id)}
        history = table.history.get(name, ())
        return HTMLResponse(pages.bot_page(name, table.title, games, replayable, history))

    return await asyncio.to_thread(page)


async def metrics(request: Request) -> Response:
    return Response(_viewer(request).metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


class _Static(StaticFiles):
    """The pages' scripts and styles, checked again at every use (a 304 while unchanged):
    a browser never runs a script older than the page that loads it, after an upgrade."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


class _SecurityHeaders:
    """Adds SECURITY_HEADERS to every HTTP response (plain ASGI: streams pass untouched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def no_page(request: Request, exc: Exception) -> Response:
    return _not_found(f"no page {request.url.path}")


async def read_only(request: Request, exc: Exception) -> Response:
    return PlainTextResponse(
        f"{request.method} is not allowed: the viewer is read-only (GET only)",
        status_code=405,
        headers={"Allow": "GET, HEAD"},
    )


def build_app(viewer: Viewer) -> Starlette:
    """The viewer app over ``viewer``'s records and arena."""
    routes = [
        Route("/", matches, methods=["GET"]),
        Route("/api/matches", matches_json, methods=["GET"]),
        Route("/live/{match_id}", live, methods=["GET"]),
        Route("/api/live/{match_id}/events", live_events, methods=["GET"]),
        Route("/replay/{record_id}", replay, methods=["GET"]),
        Route("/api/records/{record_id}/replay", replay_json, methods=["GET"]),
        Route("/api/records/{record_id}/record.jsonl", record_file, methods=["GET"]),
        Route("/standings", standings, methods=["GET"]),
        # A bot's name is the bot's (a ladder version may be a branch, `feat/x`): the
        # convertor takes the whole rest, as the server hands it over with %2F decoded, a
        # newline too (Starlette's `path` stops at one: an older ladder version `nl\nx` was
        # linked to a 404). Match and record ids need none: they never hold a slash
        # (shelf.RECORD_ID).
        Route(f"/standings/bot/{{bot:{WHOLE_REST}}}", bot, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Mount("/static", _Static(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(_SecurityHeaders)],
        exception_handlers={404: no_page, 405: read_only},
    )
    app.state.viewer = viewer
    return app


def stop_building(app: Starlette) -> None:
    """Cancel the replays being built for ``app``'s viewer and refuse new ones: their requests
    are answered ``503`` at once. Called as the viewer's server stops, before it waits for the
    requests under way (else they wait for the builder until cancelled, answered 500)."""
    viewer: Viewer | None = getattr(app.state, "viewer", None)
    if viewer is not None:
        viewer.records.close()


def records_viewer(
    records_dir: Path,
    standings: StandingsProvider | None = None,
    remote: MatchSource | None = None,
    slots: ClientSlots | None = None,
) -> Viewer:
    """A viewer of a records directory, or of one record file (``medina-arena web``), and
    of another server's matches when ``remote`` (a ``remote.RemoteArena``) is given; its
    live streams are counted per client in ``slots`` (None: not limited)."""
    sources = (remote,) if remote is not None else ()
    return Viewer(RecordShelf.at(records_dir), sources=sources, standings=standings, slots=slots)
