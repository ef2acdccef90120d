"""One tournament game: a real match on a real server, each seat's bot its own process,
started exactly as ``medina-arena match`` starts it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc

from medina.launch.botproc import BotStartError, spawn_bot, stop_bot
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome
from medina.rpc.host import HostedMatch
from medina.rpc.organiser import create_match
from medina.v1 import admin_pb2, admin_pb2_grpc
from medina.wire import convert

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
    hosted: Callable[[str], HostedMatch | None] = lambda _id: None,
) -> PlayedGame:
    """Create the match, start one process per seat, and wait for the result.

    ``hosted`` finds the match when the server runs in this process: a bot that exits before
    the end is then forfeited at once (CRASHED) rather than after its reconnect grace.
    Cancelling aborts the match and stops the bots.
    """
    matches = admin_pb2_grpc.MatchServiceStub(channel)
    try:
        # A server at capacity asks to be asked again later: retried (one request id).
        created = await create_match(
            matches,
            admin_pb2.CreateMatchRequest(config=convert.settings_to_proto(settings)),
            metadata=metadata,
        )
    except grpc.aio.AioRpcError as exc:
        raise GameError(
            f"cannot create a match at {address}: {exc.code().name}: {exc.details()}",
            fatal=exc.code() in FATAL_CODES,
        ) from None
    match_id = created.match_id
    watch = admin_pb2_grpc.SpectatorServiceStub(channel).Watch(
        admin_pb2.WatchRequest(match_id=match_id), metadata=metadata
    )
    # A multi-worker server names the process holding the match: bots go there directly.
    bot_address = created.endpoint if created.HasField("endpoint") else address
    logs.mkdir(parents=True, exist_ok=True)
    procs: list[asyncio.subprocess.Process] = []
    watchers: list[asyncio.Task[None]] = []
    finished = False
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
                )
            except BotStartError as exc:
                # Counted against this bot: its seat never connects (NO_SHOW), the rest play.
                log.warning("match %s seat %d (%s): %s", match_id, tok.seat, bot.name, exc)
                continue
            procs.append(proc)
            watchers.append(asyncio.create_task(_forfeit_on_exit(tok.seat, proc, match_id, hosted)))
        result = None
        async for message in watch:
            if message.HasField("result"):
                result = convert.outcome_from_proto(message.result)
        if result is None:
            raise GameError(f"the spectator stream of match {match_id} ended without a result")
        finished = True
        summary = await matches.GetMatch(
            admin_pb2.GetMatchRequest(match_id=match_id), metadata=metadata, timeout=30
        )
        return PlayedGame(match_id, summary.match.record_path, result)
    except grpc.aio.AioRpcError as exc:
        raise GameError(f"match {match_id}: {exc.code().name}: {exc.details()}") from None
    finally:
        for w in watchers:
            w.cancel()
        if not finished:
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
                await asyncio.shield(
                    matches.AbortMatch(
                        admin_pb2.AbortMatchRequest(
                            match_id=match_id, reason="the tournament runner stopped"
                        ),
                        metadata=metadata,
                        timeout=10,
                    )
                )
        await asyncio.shield(_stop_all(procs, 10.0 if finished else 0.0))


async def _stop_all(procs: Sequence[asyncio.subprocess.Process], timeout_s: float) -> None:
    await asyncio.gather(*(stop_bot(p, timeout_s) for p in procs))


async def _forfeit_on_exit(
    seat: int,
    proc: asyncio.subprocess.Process,
    match_id: str,
    hosted: Callable[[str], HostedMatch | None],
) -> None:
    code = await proc.wait()
    found = hosted(match_id)
    if found is None or found.match.outcome is not None:
        return
    when = "during the match" if found.seats[seat].ever_connected else "before connecting"
    found.match.process_exited(seat, f"its bot exited with code {code} {when}")
