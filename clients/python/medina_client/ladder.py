"""Playing on a ladder: one lobby stream with the bot key, and each match the ladder
assigns played as an ordinary seat (``runner.play``) beside it (docs/ladder.md).

``play_ladder`` runs until stopped: ``leave`` (the first Ctrl-C of ``python -m
medina_client --bot-key``) asks the ladder for no more matches and returns once the matches
in play have ended; cancelling it (the second Ctrl-C) quits at once. A lobby stream that
breaks is opened again with backoff, while the matches in play go on over their own streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from medina.v1 import ladder_pb2, ladder_pb2_grpc, match_pb2
from medina.wire.shared.client import lobby_heartbeat, lobby_hello, lobby_leave

from .bot import Bot
from .errors import MedinaClientError, SessionOver
from .runner import play
from .status import status_info
from .tls import TlsError, explain

__all__ = [
    "LadderError",
    "LadderOptions",
    "LadderSummary",
    "play_ladder",
    "run_ladder",
    "seat_player",
]

log = logging.getLogger("medina_client")

#: Lobby reasons that end the session for good (a retry would be refused the same way).
LOBBY_FINAL = frozenset(
    {"BOT_KEY_INVALID", "BOT_REVOKED", "BOT_SUSPENDED", "LOBBY_HELLO_INVALID", "HELLO_MISSING"}
)


class LadderError(MedinaClientError):
    """The ladder refused the bot for a reason retrying cannot fix (``reason``)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class LadderOptions:
    """What the bot tells the ladder it accepts (LobbyHello)."""

    version: str = ""
    rulesets: Sequence[str] = ()
    players: Sequence[int] = ()
    min_decision_ms: int | None = None
    max_decision_ms: int | None = None
    #: Matches at once; None: the ladder's default (1).
    max_matches: int | None = None
    client: str = "medina_client (python)"


@dataclass
class LadderSummary:
    """What a ladder session did."""

    matches: int = 0
    results: list[match_pb2.MatchResult] = field(default_factory=list)
    #: The last rating the ladder reported (mu, sigma, games).
    rating: tuple[float, float, int] | None = None


def seat_player(
    make_bot: Callable[[], Bot], credentials: grpc.ChannelCredentials | None = None
) -> Callable[[ladder_pb2.MatchAssigned], Coroutine[Any, Any, None]]:
    """How the SDK plays an assigned match: a fresh ``make_bot()`` on its seat."""

    async def game(assigned: ladder_pb2.MatchAssigned) -> None:
        try:
            await play(make_bot(), assigned.address, assigned.token, credentials=credentials)
        except SessionOver:
            pass  # the match ended without us (our seat forfeited): the lobby says how
        except (MedinaClientError, OSError) as exc:
            log.warning("ladder match %s: %s", assigned.match_id, exc)

    return game


async def play_ladder(
    play_match: Callable[[ladder_pb2.MatchAssigned], Coroutine[Any, Any, None]],
    address: str,
    key: str,
    options: LadderOptions = LadderOptions(),
    *,
    leave: asyncio.Event | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    on_result: Callable[[ladder_pb2.LadderMatchEnded], None] | None = None,
    reconnect_for_s: float = math.inf,
) -> LadderSummary:
    """Play every match the ladder at ``address`` assigns with ``play_match`` (for an SDK
    bot: ``seat_player(make_bot)``; the stdio bridge starts its program per match), until
    ``leave`` is set and the matches in play have ended. LadderError when the ladder refuses
    the bot for good (bad or revoked key, suspended version, bad options), or when its lobby
    stream keeps failing for ``reconnect_for_s`` from the last welcome (by default it is
    tried again for ever, every 10 s at most: a ladder down for maintenance longer than the
    5 minutes this was lost every SDK bot, where the Node bot came back)."""
    leave = leave or asyncio.Event()
    summary = LadderSummary()
    games: dict[str, asyncio.Task[None]] = {}
    backoff = _Backoff(reconnect_for_s)

    async def game(assigned: ladder_pb2.MatchAssigned) -> None:
        if not assigned.address:
            assigned.address = address
        await play_match(assigned)

    try:
        while True:
            try:
                if await _session(
                    address, key, options, leave, credentials, games, game, summary, on_result,
                    backoff,
                ):  # fmt: skip
                    break
            except (LadderError, TlsError) as exc:
                # Refused for good (a rotated key, a suspension): the matches in play are
                # still ours, their seats opened by their own tokens. Quitting them at once
                # was a crash on the record, rated.
                playing = [t for t in games.values() if not t.done()]
                if playing:
                    log.warning("lobby: %s; finishing %d match(es) in play", exc, len(playing))
                    await asyncio.gather(*playing, return_exceptions=True)
                raise
            except _Retry as exc:
                backoff.broke()
                # The ladder's hint is a floor, not a cap: waiting less is refused again.
                delay = max(backoff.delay, exc.after_s)
                if leave.is_set() or time.monotonic() + delay > backoff.give_up_at:
                    if not leave.is_set():
                        raise LadderError(f"the lobby stream keeps failing: {exc}") from None
                    break
                log.warning("lobby: %s; connecting again in %.1f s", exc, delay)
                await asyncio.sleep(delay)  # backoff: waiting is the point here
                backoff.delay = min(backoff.delay * 2, 10.0)
        if games:
            await asyncio.gather(*games.values(), return_exceptions=True)
    finally:
        for task in games.values():
            task.cancel()
    return summary


class _Retry(Exception):
    """The lobby stream broke for a reason worth another try; ``after_s``: the least wait
    the ladder asked for (its ``retry_after_ms``), 0 for none."""

    def __init__(self, message: str, after_s: float = 0.0) -> None:
        super().__init__(message)
        self.after_s = after_s


def _retry_after_s(metadata: Mapping[str, str]) -> float:
    """The ErrorInfo's ``retry_after_ms`` in seconds (0 when absent or unreadable)."""
    try:
        return max(0.0, int(metadata.get("retry_after_ms", "0")) / 1000)
    except ValueError:
        return 0.0


class _Backoff:
    """How long to wait before the next lobby stream, and until when to keep trying: for
    ``reconnect_for_s`` from the start, and again from every break that follows a welcome,
    so a break after hours of play gets the whole of it (counted from the start instead,
    every SDK bot quit at the first ladder restart after five minutes of play)."""

    def __init__(self, reconnect_for_s: float) -> None:
        self.reconnect_for_s = reconnect_for_s
        self.delay = 0.5
        self.give_up_at = time.monotonic() + reconnect_for_s
        self._welcomed = False
        #: Some lobby stream was welcomed: these credentials got in before.
        self.got_in = False

    def welcomed(self) -> None:
        """The ladder took the bot in: the next break is a first one."""
        self._welcomed = self.got_in = True

    def broke(self) -> None:
        """The lobby stream broke: after a welcome, the time to keep trying starts now."""
        if self._welcomed:
            self._welcomed = False
            self.delay = 0.5
            self.give_up_at = time.monotonic() + self.reconnect_for_s


async def _session(
    address: str,
    key: str,
    options: LadderOptions,
    leave: asyncio.Event,
    credentials: grpc.ChannelCredentials | None,
    games: dict[str, asyncio.Task[None]],
    game: Callable[[ladder_pb2.MatchAssigned], Coroutine[Any, Any, None]],
    summary: LadderSummary,
    on_result: Callable[[ladder_pb2.LadderMatchEnded], None] | None,
    backoff: _Backoff,
) -> bool:
    """One lobby stream; True when the session is over (the ladder closed it after Leave)."""
    outgoing: asyncio.Queue[ladder_pb2.LobbyRequest | None] = asyncio.Queue()
    outgoing.put_nowait(_hello(options))

    async def requests() -> AsyncIterator[ladder_pb2.LobbyRequest]:
        # Ends (None) with the stream: a generator left waiting was destroyed with gRPC's
        # task still running it, which asyncio reported as errors at every reconnect.
        while (message := await outgoing.get()) is not None:
            yield message

    channel = (
        grpc.aio.secure_channel(address, credentials)
        if credentials is not None
        else grpc.aio.insecure_channel(address)
    )
    async with channel:
        stub = ladder_pb2_grpc.LadderServiceStub(channel)
        call = stub.Lobby(requests(), metadata=(("authorization", f"Bearer {key}"),))

        async def on_leave() -> None:
            await leave.wait()
            outgoing.put_nowait(lobby_leave())

        leaver = asyncio.create_task(on_leave())
        welcomed = False
        try:
            async for message in call:
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    welcomed = True
                    backoff.welcomed()
                    w = message.welcome
                    log.info(
                        "on the ladder as %s %s (rating %.2f over %d games)",
                        w.bot,
                        w.bot_version or "''",
                        w.rating.ordinal,
                        w.rating.games,
                    )
                elif kind == "heartbeat":
                    outgoing.put_nowait(lobby_heartbeat(message.heartbeat.sequence))
                elif kind == "match":
                    m = message.match
                    if m.match_id not in games or games[m.match_id].done():
                        games[m.match_id] = asyncio.create_task(game(m))
                elif kind == "ended":
                    e = message.ended
                    summary.matches += 1
                    if e.HasField("result"):
                        summary.results.append(e.result)
                    if e.HasField("rating"):
                        summary.rating = (e.rating.mu, e.rating.sigma, e.rating.games)
                    if on_result is not None:
                        on_result(e)
        except grpc.aio.AioRpcError as exc:
            info = status_info(exc.trailing_metadata())
            reason = f", {info.reason}" if info.reason else ""
            text = f"{exc.code().name}{reason}: {exc.details()}"
            if info.reason in LOBBY_FINAL or exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                raise LadderError(text, info.reason) from None
            # TLS can be at fault only on a connection that never got in, and only when the
            # ladder did not say why itself: a welcomed stream that the network dropped was
            # said to need --tls-ca.
            if exc.code() == grpc.StatusCode.UNAVAILABLE and not welcomed and not info.reason:
                trouble = explain(exc.details() or "", credentials is not None)
                if trouble is not None and trouble.final:
                    raise TlsError(
                        f"cannot connect to the ladder at {address}: {trouble.text}"
                    ) from None
                # A guess at the credentials is no help once they got in (a ladder
                # restarting closes connections mid-handshake); a certificate that no
                # longer verifies (above) still ends it.
                if trouble is not None and not backoff.got_in:
                    text += f" ({trouble.text})"
            raise _Retry(text, _retry_after_s(info.metadata)) from None
        finally:
            leaver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await leaver
            outgoing.put_nowait(None)
        if leave.is_set():
            return True
        raise _Retry("the ladder closed the lobby stream")


def _hello(options: LadderOptions) -> ladder_pb2.LobbyRequest:
    return lobby_hello(
        bot_version=options.version,
        rulesets=options.rulesets,
        players=options.players,
        client=options.client,
        min_decision_ms=options.min_decision_ms,
        max_decision_ms=options.max_decision_ms,
        max_matches=options.max_matches,
    )


def run_ladder(
    play_match: Callable[[ladder_pb2.MatchAssigned], Coroutine[Any, Any, None]],
    address: str,
    key: str,
    options: LadderOptions,
    *,
    credentials: grpc.ChannelCredentials | None = None,
    quiet: bool = False,
    prog: str = "medina_client",
) -> int:
    """The command line's ladder session: a line per match, the first SIGINT/SIGTERM
    finishes the matches in play, a second quits at once. 0 when it left as asked, 1 when
    the ladder refused the bot (the reason is printed), 130 when cut short."""

    def show(ended: ladder_pb2.LadderMatchEnded) -> None:
        if quiet:
            return
        seats = ", ".join(f"{s.name} {s.total} (rank {s.rank})" for s in ended.result.seats)
        rating = f"; rating {ended.rating.ordinal:.2f}" if ended.HasField("rating") else ""
        print(f"ladder match {ended.match_id}: {seats or 'aborted'}{rating}", flush=True)

    async def run() -> int:
        leave = asyncio.Event()
        loop = asyncio.get_running_loop()
        main_task = asyncio.current_task()
        assert main_task is not None

        def interrupted() -> None:
            if leave.is_set():
                main_task.cancel()
                return
            leave.set()
            print(
                f"{prog}: finishing the matches in play (Ctrl-C again to quit now)",
                file=sys.stderr,
                flush=True,
            )

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, interrupted)
        try:
            summary = await play_ladder(
                play_match, address, key, options, leave=leave, credentials=credentials,
                on_result=show,
            )  # fmt: skip
        except asyncio.CancelledError:
            return 130
        if not quiet:
            print(f"left the ladder after {summary.matches} match(es)", flush=True)
        return 0

    try:
        return asyncio.run(run())
    except (MedinaClientError, OSError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
