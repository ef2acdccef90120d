"""A scriptable raw bot over real gRPC for end-to-end tests (generated stubs only, no SDK)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import grpc
from medina.v1 import arena_pb2, arena_pb2_grpc, game_pb2

#: Chooses a reply for a request; None means "do not answer this request".
Chooser = Callable[[arena_pb2.DecisionRequest, int], game_pb2.Action | None]


def first_legal(request: arena_pb2.DecisionRequest, _attempt: int) -> game_pb2.Action:
    """The first legal action of a request."""
    legal = request.legal
    if not legal.placements:
        return game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)
    first = legal.placements[0]
    return game_pb2.Action(kind=first.kind, square=first.squares[0], colour=first.colour)


@dataclass
class RawBot:
    """Plays one seat with a chooser; keeps every message it received."""

    address: str
    token: str
    chooser: Chooser = first_legal
    name: str = "rawbot"
    resume_token: str = ""
    protocol_version: int = 1
    received: list[arena_pb2.PlayResponse] = field(default_factory=list)
    welcome: arena_pb2.Welcome | None = None
    #: Set once the Welcome has arrived.
    welcomed: asyncio.Event = field(default_factory=asyncio.Event)
    ended: arena_pb2.MatchEnded | None = None
    #: Stop reading (simulating a vanished bot) after this many requests; -1 never.
    leave_after_requests: int = -1

    async def play(self) -> None:
        """Handshake and play until MatchEnded, or until ``leave_after_requests``."""
        outgoing: asyncio.Queue[arena_pb2.PlayRequest | None] = asyncio.Queue()

        async def requests() -> AsyncIterator[arena_pb2.PlayRequest]:
            while (message := await outgoing.get()) is not None:
                yield message

        hello = arena_pb2.Hello(
            protocol_version=self.protocol_version,
            bot_name=self.name,
            bot_version="1",
            token=self.token,
            resume_token=self.resume_token,
        )
        outgoing.put_nowait(arena_pb2.PlayRequest(hello=hello))
        attempts: dict[int, int] = {}
        requests_seen = 0
        async with grpc.aio.insecure_channel(self.address) as channel:
            call = arena_pb2_grpc.ArenaServiceStub(channel).Play(requests())
            async for message in call:
                self.received.append(message)
                kind = message.WhichOneof("message")
                if kind == "welcome":
                    self.welcome = message.welcome
                    self.welcomed.set()
                    self.resume_token = message.welcome.resume_token
                elif kind == "ended":
                    self.ended = message.ended
                    break
                elif kind in ("request", "rejected"):
                    request = message.request if kind == "request" else self._last_request()
                    if kind == "request":
                        requests_seen += 1
                        if requests_seen == self.leave_after_requests:
                            call.cancel()
                            return
                    rid = request.request_id
                    attempts[rid] = attempts.get(rid, 0) + 1
                    action = self.chooser(request, attempts[rid] - 1)
                    if action is not None:
                        reply = arena_pb2.Reply(request_id=rid, action=action)
                        outgoing.put_nowait(arena_pb2.PlayRequest(reply=reply))
            outgoing.put_nowait(None)

    def _last_request(self) -> arena_pb2.DecisionRequest:
        for message in reversed(self.received):
            if message.HasField("request"):
                return message.request
        raise AssertionError("rejected before any request")

    def of_kind(self, kind: str) -> list[arena_pb2.PlayResponse]:
        """Received messages of one oneof kind."""
        return [m for m in self.received if m.WhichOneof("message") == kind]
