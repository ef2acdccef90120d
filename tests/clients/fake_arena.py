"""A scripted fake ArenaService: each Play stream the SDK opens runs the next test script."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

import bounded
import grpc
from medina.engine import GameState, legal_moves, observe
from medina.v1 import arena_pb2, arena_pb2_grpc, match_pb2
from medina.wire.convert import legal_to_proto, observation_to_proto

T = TypeVar("T")


@dataclass(frozen=True)
class Abort:
    """End the stream with a gRPC status."""

    code: grpc.StatusCode
    details: str


class FakeStream:
    """The server side of one Play stream, as a script sees it."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[arena_pb2.PlayRequest | None] = asyncio.Queue()
        self.outbox: asyncio.Queue[arena_pb2.PlayResponse | Abort | None] = asyncio.Queue()

    async def recv(self) -> arena_pb2.PlayRequest:
        """The next message from the bot (fails the script if the bot closed its side)."""
        message = await self.inbox.get()
        assert message is not None, "the bot closed its side of the stream"
        return message

    async def hello(self) -> arena_pb2.Hello:
        """The handshake message."""
        message = await self.recv()
        assert message.HasField("hello"), message
        return message.hello

    async def reply(self) -> arena_pb2.Reply:
        """The next Reply."""
        message = await self.recv()
        assert message.HasField("reply"), message
        return message.reply

    def send(self, message: arena_pb2.PlayResponse) -> None:
        """Queue a message to the bot."""
        self.outbox.put_nowait(message)

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        """End the stream with a status after what is queued."""
        self.outbox.put_nowait(Abort(code, details))


Script = Callable[[FakeStream], Awaitable[None]]


class FakeArena(arena_pb2_grpc.ArenaServiceServicer):
    """Runs one script per Play stream, in order; records script failures."""

    def __init__(self, scripts: list[Script]) -> None:
        self.scripts = deque(scripts)
        self.failures: list[BaseException] = []
        self.streams = 0

    async def Play(
        self,
        request_iterator: AsyncIterator[arena_pb2.PlayRequest],
        context: grpc.aio.ServicerContext[arena_pb2.PlayRequest, arena_pb2.PlayResponse],
    ) -> AsyncIterator[arena_pb2.PlayResponse]:
        """Feed the bot's messages to the script and its messages to the bot."""
        self.streams += 1
        if not self.scripts:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no script left")
        script = self.scripts.popleft()
        stream = FakeStream()

        async def read() -> None:
            try:
                async for message in request_iterator:
                    stream.inbox.put_nowait(message)
            finally:
                stream.inbox.put_nowait(None)

        async def run() -> None:
            try:
                await script(stream)
            except BaseException as exc:
                self.failures.append(exc)
                stream.abort(grpc.StatusCode.INTERNAL, f"script failed: {exc!r}")
            finally:
                stream.outbox.put_nowait(None)

        loop = asyncio.get_running_loop()
        reader, runner = loop.create_task(read()), loop.create_task(run())
        try:
            while (item := await stream.outbox.get()) is not None:
                if isinstance(item, Abort):
                    await context.abort(item.code, item.details)
                yield item
        finally:
            reader.cancel()
            await runner


@asynccontextmanager
async def fake_server(
    scripts: list[Script], credentials: grpc.ServerCredentials | None = None
) -> AsyncIterator[tuple[FakeArena, str]]:
    """A server on 127.0.0.1 (port 0, read back) running ``scripts``; checks them on exit."""
    arena = FakeArena(scripts)
    server = grpc.aio.server()
    arena_pb2_grpc.add_ArenaServiceServicer_to_server(arena, server)
    if credentials is None:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        port = server.add_secure_port("127.0.0.1:0", credentials)
    await server.start()
    try:
        yield arena, f"127.0.0.1:{port}"
    finally:
        await server.stop(0)
        if arena.failures:
            first = arena.failures[0]
            raise AssertionError(f"a fake server script failed: {first!r}") from first


# -- messages built with the engine ------------------------------------------------------


def config_of(s: GameState) -> match_pb2.MatchConfig:
    """The MatchConfig of a game started with ``new_game``."""
    ruleset = {"medina-v2": 1, "medina-v1": 2, "medina-v1-2p": 3}[s.rules.name]
    return match_pb2.MatchConfig(
        ruleset=ruleset,  # type: ignore[arg-type]
        players=s.players,
        seed=s.seed,
        start_seat=s.start_seat,
    )


def welcome(s: GameState, seat: int, resume_token: str = "resume-1") -> arena_pb2.PlayResponse:
    """Welcome for ``seat`` with the whole history of ``s``."""
    return arena_pb2.PlayResponse(
        welcome=arena_pb2.Welcome(
            protocol_version=1,
            match_id="m1",
            seat=seat,
            config=config_of(s),
            resume_token=resume_token,
            observation=observation_to_proto(observe(s, seat)),
        )
    )


def request(
    s: GameState, request_id: int, since: int = 0, *, legal: bool = True, time_left_ms: int = 5000
) -> arena_pb2.PlayResponse:
    """A DecisionRequest for the seat to move in ``s``."""
    msg = arena_pb2.DecisionRequest(
        request_id=request_id,
        observation=observation_to_proto(observe(s, s.to_move, since=since)),
        clock=arena_pb2.Clock(time_left_ms=time_left_ms, bank_ms=60_000, last_reply_ms=3),
    )
    if legal:
        msg.legal.CopyFrom(legal_to_proto(legal_moves(s)))
    return arena_pb2.PlayResponse(request=msg)


def ended(players: int) -> arena_pb2.PlayResponse:
    """A MatchEnded with a made-up result."""
    seats = [
        match_pb2.SeatResult(seat=i, name=f"bot{i}", total=10 - i, rank=i + 1)
        for i in range(players)
    ]
    result = match_pb2.MatchResult(seats=seats, ending=match_pb2.MATCH_ENDING_COMPLETE)
    return arena_pb2.PlayResponse(ended=arena_pb2.MatchEnded(result=result))


def run(coro: Awaitable[T], timeout: float = 30) -> T:
    """Run a coroutine on a fresh event loop, failing after ``timeout`` seconds."""

    return bounded.run(coro, timeout)
