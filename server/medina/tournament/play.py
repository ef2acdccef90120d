"""One tournament game: a real match on a real server, each seat's bot its own process,
started exactly as ``medina-arena match`` starts it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from medina.launch.botproc import BotProcess, BotStartError, spawn_bot, stop_bot, watch_bot_exit
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome, Termination
from medina.rpc.organiser import SeatForfeit, create_match, report_queued, seat_forfeiter
from medina.sandbox import SandboxError, SandboxSpec
from medina.sandbox import check as sandbox_check
from medina.v1 import admin_pb2_grpc
from medina.wire import convert
from medina.wire import matches as wire_matches
from medina.wire.shared.tls import ClientTls

from .config import BotSpec

log = logging.getLogger("medina.tournament")


class GameError(Exception):
    """The game could not be played (server refused it, stream broke); it is given back.
    ``fatal``: no game will be played this way (wrong credential, a server that does not
    know the call) -- the runner stops rather than retry."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


#: CreateMatch answers that no retry will change.
FATAL_CODES = (
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNIMPLEMENTED,
)


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """What a played game left: its match, record and result."""

    match_id: str
    record_path: str
    outcome: MatchOutcome
    #: Seats whose sandbox stopped their bot at a limit: seat -> ``sandbox: ... reached``.
    notes: dict[int, str] = field(default_factory=dict)

    def detail(self, seat: int) -> str:
        """A seat's termination detail, with its sandbox's note when the note is news."""
        s = self.outcome.seats[seat]
        note = self.notes.get(seat, "")
        if not note or note in s.detail or s.termination is Termination.NORMAL:
            return s.detail
        return f"{s.detail}; {note}" if s.detail else note

    @property
    def ending(self) -> str:
        """complete, abandoned or aborted."""
        if self.outcome.complete:
            return "complete"
        return "abandoned" if self.outcome.abandoned else "aborted"


async def play_game(
    channel: grpc.aio.Channel,
    address: str,
    settings: MatchSettings,
    bots: Sequence[BotSpec],
    base_dir: Path,
    logs: Path,
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    hide: Sequence[Path] = (),
    say: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
    tls: ClientTls | None = None,
    on_result: Callable[[PlayedGame], Awaitable[None]] | None = None,
) -> PlayedGame:
    """Create the match, start one process per seat, and wait for the result.

    A bot that exits before the end is forfeited at once (CRASHED), on this process's
    server or another alike (``watch_bot_exit``: ForfeitSeat), rather than after its
    reconnect grace. Setting ``stop`` aborts the match and returns its result as the server
    has it: aborted, or complete when the match had ended first (a result the caller keeps:
    the record is on disk), the bots killed at once once it is aborted.
    A bot with sandbox limits runs sandboxed in its directory, with ``hide`` (records,
    database, other bots) out of its sight. ``tls``: the server is dialled over TLS, and the
    bots are given the same files (``spawn_bot``). Cancelling aborts the match and stops the
    bots. ``on_result`` is given the result as soon as it is known, before the bots of a
    complete game are given their time to exit: a caller that stores it there loses no
    finished game to a kill during those seconds.
    """
    if any(b.sandbox is not None for b in bots):
        try:
            sandbox_check()  # a machine that cannot sandbox plays no game of sandboxed bots
        except SandboxError as exc:
            raise GameError(f"cannot run sandboxed bots here: {exc}", fatal=True) from None
    matches = admin_pb2_grpc.MatchServiceStub(channel)
    try:
        # A server at capacity asks to be asked again later: retried (one request id).
        created = await create_match(
            matches,
            wire_matches.create_request(settings),
            metadata=metadata,
        )
    except grpc.aio.AioRpcError as exc:
        raise GameError(
            f"cannot create a match at {address}: {exc.code().name}: {exc.details()}",
            fatal=exc.code() in FATAL_CODES,
        ) from None
    match_id = created.match_id
    watch = admin_pb2_grpc.SpectatorServiceStub(channel).Watch(
        wire_matches.watch_request(match_id), metadata=metadata
    )
    # A multi-worker server names the process holding the match: bots go there directly.
    bot_address = created.endpoint if created.HasField("endpoint") else address
    logs.mkdir(parents=True, exist_ok=True)
    procs: list[BotProcess] = []
    seat_procs: dict[int, BotProcess] = {}
    watchers: list[asyncio.Task[SeatForfeit]] = []
    forfeit = seat_forfeiter(matches, match_id, metadata)
    reporter = (
        None
        if say is None
        else asyncio.create_task(report_queued(matches, match_id, say, metadata=metadata))
    )
    finished = False
    played: PlayedGame | None = None
    aborting = (
        None if stop is None else asyncio.create_task(_abort_on(stop, matches, match_id, metadata))
    )
    try:
        for bot, tok in zip(bots, created.tokens, strict=True):
            log_path = logs / f"{match_id}.seat{tok.seat}.log"
            try:
                proc = await spawn_bot(
                    bot.command,
                    bot_address,
                    tok.token,
                    log_path,
                    cwd=(base_dir / bot.cwd) if bot.cwd else None,
                    env=dict(bot.env),
                    sandbox=sandbox_spec(bot, base_dir, hide),
                    tls=tls,
                )
            except BotStartError as exc:
                # Counted against this bot: its seat never connects (NO_SHOW), the rest play.
                log.warning("match %s seat %d (%s): %s", match_id, tok.seat, bot.name, exc)
                continue
            procs.append(proc)
            seat_procs[tok.seat] = proc
            watchers.append(asyncio.create_task(watch_bot_exit(proc, tok.seat, forfeit)))
        result = None
        async for message in watch:
            if message.HasField("result"):
                result = convert.outcome_from_proto(message.result)
        if result is None:
            raise GameError(f"the spectator stream of match {match_id} ended without a result")
        finished = True
        summary = await matches.GetMatch(
            wire_matches.get_request(match_id), metadata=metadata, timeout=30
        )
        # A bot stopped at a sandbox limit has exited by the end: its note is known now.
        notes = {seat: hit for seat, p in seat_procs.items() if (hit := p.limit_hit()) is not None}
        played = PlayedGame(match_id, summary.match.record_path, result, notes)
        if on_result is not None:
            await on_result(played)
    except grpc.aio.AioRpcError as exc:
        raise GameError(f"match {match_id}: {exc.code().name}: {exc.details()}") from None
    finally:
        for w in watchers:
            w.cancel()
        if reporter is not None:
            reporter.cancel()
        if aborting is not None:
            aborting.cancel()
        if not finished:
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
                await asyncio.shield(_abort(matches, match_id, metadata))
        # A complete game's bots get 10 s to exit as they please; an aborted one's none.
        complete = played is not None and played.ending != "aborted"
        linger = 10.0 if complete else 0.0
        await _stop_all(procs, linger)
    assert played is not None
    return played


async def _abort(
    matches: admin_pb2_grpc.MatchServiceAsyncStub,
    match_id: str,
    metadata: tuple[tuple[str, str], ...],
) -> None:
    await matches.AbortMatch(
        wire_matches.abort_request(match_id, "the tournament runner stopped"),
        metadata=metadata,
        timeout=10,
    )


async def _abort_on(
    stop: asyncio.Event,
    matches: admin_pb2_grpc.MatchServiceAsyncStub,
    match_id: str,
    metadata: tuple[tuple[str, str], ...],
) -> None:
    """Abort the match once ``stop`` is set; the spectator stream then brings its result
    (MATCH_ENDED, when it had ended first: the result stands)."""
    await stop.wait()
    with contextlib.suppress(grpc.aio.AioRpcError):
        await _abort(matches, match_id, metadata)


def sandbox_spec(bot: BotSpec, base_dir: Path, hide: Sequence[Path]) -> SandboxSpec | None:
    """How to sandbox ``bot`` (None when it runs unsandboxed): in its directory, with
    ``hide`` out of its sight."""
    if bot.sandbox is None:
        return None
    return SandboxSpec(bot.sandbox, bot.directory(base_dir), hide=tuple(hide))


async def _stop_all(procs: Sequence[BotProcess], timeout_s: float) -> None:
    """Give each bot ``timeout_s`` to exit, then kill it. Cancelled meanwhile, the bots are
    killed at once and waited for before the cancellation goes on: left to run, a bot was
    still the loop's child when the runner's loop closed (asyncio warned that the closed
    loop handled its pid) and was killed only at the runner's exit."""
    stopping = asyncio.gather(*(stop_bot(p, timeout_s) for p in procs))
    try:
        await asyncio.shield(stopping)
    except asyncio.CancelledError:
        for p in procs:
            p.kill()
        await stopping
        raise
