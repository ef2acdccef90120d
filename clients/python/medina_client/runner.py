"""The play loop: answer every request, retry after a refusal, reconnect after a drop."""

from __future__ import annotations

import asyncio
import logging
import time

import grpc
from medina.engine import Action, GameState
from medina.v1 import arena_pb2, match_pb2
from medina.wire.convert import action_to_proto

from .bot import Bot, Turn
from .connection import Connection
from .errors import ConnectionLost, HandshakeError
from .tracker import GameTracker

log = logging.getLogger("medina_client")


async def play(
    bot: Bot,
    address: str,
    token: str,
    *,
    omit_legal_actions: bool = False,
    credentials: grpc.ChannelCredentials | None = None,
    reconnect_for_s: float = 10.0,
) -> match_pb2.MatchResult:
    """Play one seat to the end of its match and return the result.

    A dropped stream is retried (with the resume token) for up to
    ``reconnect_for_s`` seconds, as is a server that is not listening yet.
    HandshakeError is raised at once: it will not get better by retrying.
    """
    session = _Session(bot)
    gave_up_at: float | None = None
    delay = 0.05
    while True:
        try:
            return await session.run(address, token, omit_legal_actions, credentials)
        except ConnectionLost as exc:
            now = time.monotonic()
            gave_up_at = gave_up_at or now + reconnect_for_s
            if now >= gave_up_at:
                raise
            log.warning("%s; reconnecting in %.2f s", exc, delay)
            await asyncio.sleep(delay)  # backoff between reconnect attempts
            delay = min(delay * 2, 1.0)


class _Session:
    """State kept across reconnects."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.resume_token = ""
        self.tracker: GameTracker | None = None
        self.seat = -1
        self.sent: dict[int, Action] = {}

    def _state(self) -> GameState:
        assert self.tracker is not None
        return self.tracker.state

    async def run(
        self,
        address: str,
        token: str,
        omit_legal: bool,
        credentials: grpc.ChannelCredentials | None,
    ) -> match_pb2.MatchResult:
        bot = self.bot
        hello = arena_pb2.Hello(
            bot_name=bot.name,
            bot_version=bot.version,
            token=token,
            resume_token=self.resume_token,
            omit_legal_actions=omit_legal,
        )
        async with Connection(address, credentials) as conn:
            welcome = await conn.handshake(hello)
            self.resume_token = welcome.resume_token
            self.seat = welcome.seat
            self.tracker = GameTracker(welcome.config)
            self.tracker.feed(welcome.observation.events)
            bot.on_start(welcome)
            pending: dict[int, Turn] = {}
            async for message in conn.messages():
                kind = message.WhichOneof("message")
                if kind == "request":
                    request = message.request
                    self.tracker.feed(request.observation.events)
                    turn = Turn(request, self.seat, self._state)
                    pending = {request.request_id: turn}
                    self._answer(conn, turn)
                elif kind == "rejected":
                    rejected = message.rejected
                    bot.on_rejected(rejected)
                    old = pending.get(rejected.request_id)
                    if old is not None:
                        refused = self.sent.get(rejected.request_id)
                        excluded = old.excluded | ({refused} if refused else set())
                        turn = Turn(old.request, self.seat, self._state, frozenset(excluded))
                        pending[rejected.request_id] = turn
                        self._answer(conn, turn)
                elif kind == "update":
                    events = list(message.update.events)
                    self.tracker.feed(events)
                    bot.on_update(events)
                elif kind == "notice":
                    bot.on_notice(message.notice)
                elif kind == "ended":
                    bot.on_end(message.ended.result)
                    return message.ended.result
        raise ConnectionLost("the stream ended before the match did")

    def _answer(self, conn: Connection, turn: Turn) -> None:
        action = self.bot.choose(turn)
        reply = arena_pb2.Reply(request_id=turn.request_id, action=action_to_proto(action))
        conn.send(arena_pb2.PlayRequest(reply=reply))
        self.sent = {turn.request_id: action}  # to leave it out if the server refuses it


__all__ = ["HandshakeError", "play"]
