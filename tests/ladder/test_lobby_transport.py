"""The lobby's port holds the transport limits the arena's port holds (docs/operations.md,
"Limits"): a connection that never finishes its handshake is closed at the handshake
deadline, and a burst of new calls is taken up rather than cancelled; an address opens at
most its stream limit of lobby streams at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from medina.ladder.matchmaker import Offer
from medina.ladder.serve import LadderServerConfig, RunningLadder, start_ladder
from medina.ladder.service import LadderConfig
from medina.rpc.common.limits import Limits
from medina.v1 import ladder_pb2, ladder_pb2_grpc
from medina_client.status import status_info
from silent import silent_connections_closed

T = TypeVar("T")
pytestmark = pytest.mark.timeout(120)

CONFIG = LadderConfig(offers=(Offer("medina-v2", 2, 300),), hello_timeout_s=30.0, seed=1)


def run(make: Callable[[], Awaitable[T]], timeout_s: float = 90) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(timeout_s):
            return await make()

    return asyncio.run(bounded())


async def ladder_on(tmp_path: Path, limits: Limits) -> RunningLadder:
    return await start_ladder(
        LadderServerConfig(
            db=str(tmp_path / "ladder.db"),
            port=0,
            records_dir=tmp_path / "rec",
            ladder=CONFIG,
            limits=limits,
        )
    )


def test_silent_tcp_connections_to_the_lobby_are_closed_at_the_handshake_deadline(
    tmp_path: Path,
) -> None:
    # The lobby's server had none of the arena's options: a raw TCP connection that never
    # spoke HTTP/2 was held for gRPC's own default (about a minute), not the handshake
    # deadline, so a few thousand of them a minute held the ladder's (and its arena's)
    # open files.
    async def scenario() -> None:
        ladder = await ladder_on(tmp_path, Limits(handshake_timeout_s=1.0))
        try:
            await silent_connections_closed("127.0.0.1", ladder.port, 20)
        finally:
            await ladder.stop()

    run(scenario)


def test_a_burst_of_lobby_calls_is_answered_not_cancelled(tmp_path: Path) -> None:
    # 2,500 lobby streams at once over 50 connections (bots coming back to a restarted
    # ladder, say): gRPC's default of 1,000 waiting calls cancelled some (CANCELLED, no
    # reason) instead of the answer each was owed, here BOT_KEY_INVALID.
    async def scenario() -> list[str]:
        ladder = await ladder_on(tmp_path, Limits())
        options = [("grpc.use_local_subchannel_pool", 1)]
        address = f"127.0.0.1:{ladder.port}"
        channels = [grpc.aio.insecure_channel(address, options=options) for _ in range(50)]
        bad = (("authorization", "Bearer mdk_0123456789abcdef.nope"),)
        hello = ladder_pb2.LobbyRequest(hello=ladder_pb2.LobbyHello(protocol_version=1))

        async def refused(stub: ladder_pb2_grpc.LadderServiceAsyncStub) -> str:
            try:
                async for _ in stub.Lobby(iter([hello]), metadata=bad, timeout=60):
                    pass
            except grpc.aio.AioRpcError as exc:
                reason = status_info(exc.trailing_metadata()).reason
                return reason or f"{exc.code().name}: {exc.details()}"
            return "OK"

        try:
            stubs = [ladder_pb2_grpc.LadderServiceStub(channel) for channel in channels]
            return await asyncio.gather(*(refused(s) for s in stubs for _ in range(50)))
        finally:
            for channel in channels:
                await channel.close()
            await ladder.stop()

    answers = run(scenario)
    others = sorted({a for a in answers if a != "BOT_KEY_INVALID"})
    assert not others, f"{sum(a != 'BOT_KEY_INVALID' for a in answers)} of 2500: {others}"


def test_an_address_opens_at_most_its_stream_limit_of_lobby_streams_at_once(
    tmp_path: Path,
) -> None:
    # Every lobby stream waited for its key's check and its LobbyHello with no cap on how
    # many one address had: 12,800 streams of made-up keys held 300 MB of the ladder.
    # Streams not welcomed yet count against --max-streams-per-client (3 here).
    async def scenario() -> tuple[list[tuple[str, str]], int]:
        limits = Limits(max_streams_per_client=3, limit_loopback=True)
        ladder = await start_ladder(
            LadderServerConfig(
                db=str(tmp_path / "ladder.db"),
                port=0,
                records_dir=tmp_path / "rec",
                ladder=replace(CONFIG, hello_timeout_s=120.0),
                limits=limits,
                organiser_token="organiser",
            )
        )
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{ladder.port}")
        stub = ladder_pb2_grpc.LadderServiceStub(channel)
        organiser = (("authorization", "Bearer organiser"),)
        release = asyncio.Event()

        async def silent() -> AsyncIterator[ladder_pb2.LobbyRequest]:
            await release.wait()  # no LobbyHello: the stream waits for it
            return
            yield

        async def ended(call: AsyncIterable[object]) -> tuple[str, str]:
            try:
                async for _ in call:
                    pass
            except grpc.aio.AioRpcError as exc:
                info = status_info(exc.trailing_metadata())
                return info.reason, info.metadata.get("limit", "")
            return "OK", ""

        calls = []
        try:
            for n in range(5):
                added = ladder_pb2.AddBotRequest(name=f"bot-{n}")
                key = (await stub.AddBot(added, metadata=organiser)).key
                calls.append(stub.Lobby(silent(), metadata=(("authorization", f"Bearer {key}"),)))
            tasks = [asyncio.create_task(ended(call)) for call in calls]
            async with asyncio.timeout(60):  # well within the hello timeout
                finished = asyncio.as_completed(tasks)
                refused = [await next(finished) for _ in range(2)]
            waiting = sum(not t.done() for t in tasks)
            release.set()
            for call in calls:
                call.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return refused, waiting
        finally:
            release.set()
            await channel.close()
            await ladder.stop()

    refused, waiting = run(scenario)
    assert refused == [("TOO_MANY_STREAMS", "3")] * 2
    assert waiting == 3
