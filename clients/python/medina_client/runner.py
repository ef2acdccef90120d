"""The play loop: answer every request, retry after a refusal, reconnect after a drop."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import grpc
from medina.engine import Action, GameState
from medina.v1 import arena_pb2, match_pb2
from medina.wire.shared.client import with_clock

from . import messages
from .bot import Bot, Turn
from .connection import Connection
from .errors import ConnectionLost, Redirected
from .route import Route
from .tracker import GameTracker

log = logging.getLogger("medina_client")
T = TypeVar("T")


async def play(
    bot: Bot,
    address: str,
    token: str,
    *,
    omit_legal_actions: bool = False,
    omit_updates: bool | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    reconnect_for_s: float = 10.0,
    first_backoff_s: float = 0.05,
    max_backoff_s: float = 1.0,
) -> match_pb2.MatchResult:
    """Play one seat to the end of its match and return the result.

    A stream that breaks before MatchEnded is opened again, presenting the
    resume token from Welcome, with exponential backoff (``first_backoff_s``
    doubling up to ``max_backoff_s``) for up to ``reconnect_for_s`` seconds
    from the break; the same holds for a server that is not listening yet.
    HandshakeError, SessionOver and ProtocolError are raised at once: retrying would not
    help (their ``reason`` says why, docs/protocol.md "Errors").
    ConnectionLost is raised when the time is up. With ``omit_updates`` the server sends no
    Update messages (``Bot.on_update`` is not called); every request carries the events
    since the previous one, so ``turn.state()`` is the same. Left as None, updates are asked
    for only when the bot's class overrides ``on_update`` (the server's cheaper path
    otherwise). A server that runs matches in several processes may redirect the stream
    to the one holding the match; it is followed.
    """
    if omit_updates is None:
        omit_updates = not uses_updates(bot)
    session = _Session(bot, token, omit_legal_actions, omit_updates)
    route = Route(address)
    return await reconnecting(
        session,
        lambda: session.run(route, credentials),
        reconnect_for_s=reconnect_for_s,
        first_backoff_s=first_backoff_s,
        max_backoff_s=max_backoff_s,
        route=route,
    )


def uses_updates(bot: Bot) -> bool:
    """Whether ``bot`` reacts to Update messages (its class overrides ``on_update``). A bot
    that does not is served faster without them: every request carries the events since
    the seat's previous one anyway."""
    return type(bot).on_update is not Bot.on_update


class Resumable(Protocol):
    """A seat's play kept across streams; ``welcomed`` is set when a Welcome arrives."""

    welcomed: bool


async def reconnecting(
    session: Resumable,
    attempt: Callable[[], Awaitable[T]],
    *,
    reconnect_for_s: float,
    first_backoff_s: float,
    max_backoff_s: float,
    route: Route | None = None,
) -> T:
    """Run ``attempt`` (one stream) until it returns, opening it again after ConnectionLost
    with exponential backoff for up to ``reconnect_for_s`` from each break (see ``play``).

    With a ``route``, a Redirect is followed at once, and an address a redirect named that
    cannot be reached is given up for the address the bot was given (without redirects).
    """
    give_up_at: float | None = None
    delay = first_backoff_s
    while True:
        try:
            return await attempt()
        except Redirected as exc:
            if route is None:
                raise ConnectionLost(f"{exc}, which this session cannot follow") from None
            route.follow(exc)
            log.info("%s; connecting to %s", exc, route.current)
        except ConnectionLost as exc:
            if route is not None and route.redirected and not session.welcomed:
                log.warning("%s; back to %s", exc, route.given)
                route.fall_back()
                continue
            now = time.monotonic()
            if session.welcomed:  # the last attempt got in: a fresh break, a fresh budget
                session.welcomed = False
                give_up_at, delay = now + reconnect_for_s, first_backoff_s
            elif give_up_at is None:
                give_up_at = now + reconnect_for_s
            if now + delay > give_up_at:
                raise
            log.warning("%s; reconnecting in %.2f s", exc, delay)
            await asyncio.sleep(delay)  # backoff: waiting is the point here
            delay = min(delay * 2, max_backoff_s)


class _Session:
    """One seat's play, kept across reconnects."""

    def __init__(self, bot: Bot, token: str, omit_legal: bool, omit_updates: bool = False) -> None:
        self.bot = bot
        self.token = token
        self.omit_legal = omit_legal
        self.omit_updates = omit_updates
        self.resume_token = ""
        self.tracker: GameTracker | None = None
        self.seat = -1
        self.welcomed = False  # a Welcome arrived since the runner last looked
        self.turn: Turn | None = None  # the open request
        self.sent: Action | None = None  # the last action sent for it

    def _state(self) -> GameState:
        assert self.tracker is not None
        return self.tracker.state

    async def run(
        self, route: Route, credentials: grpc.ChannelCredentials | None
    ) -> match_pb2.MatchResult:
        """One stream: handshake, then serve it until MatchEnded or a break."""
        bot = self.bot
        hello = messages.hello(
            self.token,
            bot.name,
            bot.version,
            self.resume_token,
            self.omit_legal,
            self.omit_updates,
            features=messages.features(redirects=route.redirects),
        )
        async with Connection(route.current, credentials) as conn:
            welcome = await conn.handshake(hello)
            route.arrived()
            self.welcomed = True
            self.resume_token = welcome.resume_token or self.resume_token
            self.seat = welcome.seat
            self.tracker = tracker = GameTracker(welcome.config)
            tracker.feed(welcome.observation.events)
            self.turn = None
            bot.on_start(welcome)
            async for message in conn.messages():
                kind = message.WhichOneof("message")
                if kind == "request":
                    request = message.request
                    tracker.feed(request.observation.events)
                    self._answer(conn, Turn(request, self.seat, self._state))
                elif kind == "update":
                    events = message.update.events
                    tracker.feed(events)
                    bot.on_update(events)
                elif kind == "rejected":
                    self._retry(conn, message.rejected)
                elif kind == "notice":
                    bot.on_notice(message.notice)
                elif kind == "forfeited":
                    bot.on_forfeit(message.forfeited)
                elif kind == "ended":
                    ended = message.ended
                    tracker.feed(ended.observation.events)
                    bot.on_end(ended.result)
                    return ended.result
                else:
                    log.warning("ignoring a server message of unknown kind %r", kind)
        raise ConnectionLost("the server closed the stream before the match ended")

    def _answer(self, conn: Connection, turn: Turn) -> None:
        action = self.bot.choose(turn)
        self.turn, self.sent = turn, action
        conn.send(messages.reply(turn.request_id, action))

    def _retry(self, conn: Connection, rejected: arena_pb2.Rejected) -> None:
        """Tell the bot, then ask it again for the same request without the refused action."""
        self.bot.on_rejected(rejected)
        old = self.turn
        if old is None or old.request_id != rejected.request_id:
            log.warning("rejection of request %d, which is not open", rejected.request_id)
            return
        excluded = old.excluded if self.sent is None else old.excluded | {self.sent}
        request = old.request
        if rejected.HasField("clock"):
            request = with_clock(old.request, rejected.clock)
        self._answer(conn, Turn(request, self.seat, self._state, excluded))
