"""A scriptable raw bot over real gRPC for end-to-end tests (generated stubs only, no SDK)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import grpc
from google.rpc.error_details_pb2 import ErrorInfo
from google.rpc.status_pb2 import Status
from medina.rpc.common.status import Reason
from medina.v1 import arena_pb2, arena_pb2_grpc, game_pb2

#: Chooses a reply for a request; None means "do not answer this request".
Chooser = Callable[[arena_pb2.DecisionRequest, int], game_pb2.Action | None]
#: Sees each message first; returning True skips the default handling.
Hook = Callable[["RawBot", arena_pb2.PlayResponse], bool]


def reason_of(code: grpc.StatusCode, metadata: object) -> str:
    """The ErrorInfo reason of an error status's trailing metadata, checked to be well formed:
    a google.rpc.Status with the same code, one ErrorInfo of domain medina.v1 whose reason
    is in the documented table. Raises AssertionError otherwise."""
    details = [v for k, v in metadata or () if k == "grpc-status-details-bin"]  # type: ignore[attr-defined]
    assert len(details) == 1, f"{code.name}: no status details in {metadata!r}"
    status = Status.FromString(details[0])
    assert status.code == code.value[0]
    infos = []
    for detail in status.details:
        info = ErrorInfo()
        assert detail.Unpack(info), detail.type_url
        infos.append(info)
    assert len(infos) == 1 and infos[0].domain == "medina.v1", infos
    reason = infos[0].reason
    assert reason in Reason.__members__, reason
    return reason


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
    omit_updates: bool = False
    #: Protocol 1.1 opt-in features to ask for (none: a 1.0 bot).
    features: tuple[str, ...] = ()
    protocol_minor: int = 0
    received: list[arena_pb2.PlayResponse] = field(default_factory=list)
    welcome: arena_pb2.Welcome | None = None
    #: Set once the Welcome has arrived.
    welcomed: asyncio.Event = field(default_factory=asyncio.Event)
    ended: arena_pb2.MatchEnded | None = None
    #: Stop reading (simulating a vanished bot) after this many requests; -1 never.
    leave_after_requests: int = -1
    hook: Hook | None = None
    #: What the bot sends; ``send`` puts messages here.
    outgoing: asyncio.Queue[arena_pb2.PlayRequest | None] = field(default_factory=asyncio.Queue)
    #: The gRPC status the stream ended with (None: ended by MatchEnded or by leaving).
    status: grpc.StatusCode | None = None
    details: str = ""
    #: The ErrorInfo reason of that status.
    reason: str = ""
    #: Keep a failing status in ``status``/``details`` instead of raising it from ``play``.
    keep_status: bool = False
    #: gRPC channel options (``("grpc.use_local_subchannel_pool", 1)``: a connection of its
    #: own, not one shared with the process's other channels to the same address).
    channel_options: tuple[tuple[str, int], ...] = ()

    def send(self, message: arena_pb2.PlayRequest) -> None:
        """Queue a message for the server."""
        self.outgoing.put_nowait(message)

    def reply(self, request_id: int, action: game_pb2.Action) -> None:
        """Queue a Reply."""
        self.send(
            arena_pb2.PlayRequest(reply=arena_pb2.Reply(request_id=request_id, action=action))
        )

    async def play(self) -> None:
        """Handshake and play until MatchEnded, or until ``leave_after_requests``."""
        outgoing = self.outgoing = asyncio.Queue()

        async def requests() -> AsyncIterator[arena_pb2.PlayRequest]:
            while (message := await outgoing.get()) is not None:
                yield message

        hello = arena_pb2.Hello(
            protocol_version=self.protocol_version,
            bot_name=self.name,
            bot_version="1",
            token=self.token,
            resume_token=self.resume_token,
            omit_updates=self.omit_updates,
            features=self.features,
            protocol_minor=self.protocol_minor,
        )
        outgoing.put_nowait(arena_pb2.PlayRequest(hello=hello))
        attempts: dict[int, int] = {}
        async with grpc.aio.insecure_channel(self.address, self.channel_options) as channel:
            call = arena_pb2_grpc.ArenaServiceStub(channel).Play(requests())
            try:
                await self._read(call, attempts)
            except grpc.aio.AioRpcError as exc:
                self.status = exc.code()
                self.details = exc.details() or ""
                # Statuses gRPC makes itself (a dead server, the client's own failed write)
                # carry none; the tests assert the reason wherever the server ends the call.
                if any(k == "grpc-status-details-bin" for k, _ in exc.trailing_metadata() or ()):
                    self.reason = reason_of(exc.code(), exc.trailing_metadata())
                if not self.keep_status:
                    raise
            finally:
                outgoing.put_nowait(None)

    async def _read(
        self,
        call: grpc.aio.StreamStreamCall[arena_pb2.PlayRequest, arena_pb2.PlayResponse],
        attempts: dict[int, int],
    ) -> None:
        requests_seen = 0
        async for message in call:
            self.received.append(message)
            if self.hook is not None and self.hook(self, message):
                continue
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
                    self.reply(rid, action)

    def _last_request(self) -> arena_pb2.DecisionRequest:
        for message in reversed(self.received):
            if message.HasField("request"):
                return message.request
        raise AssertionError("rejected before any request")

    def of_kind(self, kind: str) -> list[arena_pb2.PlayResponse]:
        """Received messages of one oneof kind."""
        return [m for m in self.received if m.WhichOneof("message") == kind]


def collect_tasks(into: set[asyncio.Task[object]], qualname: str) -> Hook:
    """A hook that adds to ``into`` the running tasks whose coroutine is ``qualname`` (say
    ``"ArenaServicer._read"``), each time the bot receives a message; it skips nothing."""

    def hook(_bot: RawBot, _message: arena_pb2.PlayResponse) -> bool:
        # Not every task runs a coroutine with a name: closing an async generator runs its
        # ``aclose()`` awaitable (``async_generator_athrow``) as a task of its own.
        into.update(
            t
            for t in asyncio.all_tasks()
            if getattr(t.get_coro(), "__qualname__", None) == qualname
        )
        return False

    return hook
