"""The sandbox's relay paces the streams a bot opens (sandbox/forward.py): a sandboxed bot
opening Play streams with made-up tokens, a thousand at once, kept the arena refusing them
while its opponent's replies waited, and the opponent timed out."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from medina.rpc.single.server import start_private_server
from medina.sandbox.forward import PREFACE, Forwarder, NewStreams, StreamPace
from medina.v1 import arena_pb2, arena_pb2_grpc

pytestmark = pytest.mark.timeout(120)


def frame(kind: int, stream: int, payload: bytes, flags: int = 0) -> bytes:
    """One HTTP/2 frame."""
    return (
        len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload
    )


#: A client's bytes: settings, two streams opened (the second's headers continued), data,
#: a window update, and trailers on the first (no new stream): 2 streams.
CLIENT = PREFACE + b"".join(
    (
        frame(0x4, 0, bytes(6)),  # SETTINGS
        frame(0x1, 1, b"\x82\x86\x84"),  # HEADERS, stream 1
        frame(0x0, 1, b"hello, arena" * 3),  # DATA
        frame(0x1, 3, b"\x82", flags=0),  # HEADERS, stream 3 ...
        frame(0x9, 3, b"\x86\x84", flags=0x4),  # ... and its CONTINUATION
        frame(0x8, 0, bytes(4)),  # WINDOW_UPDATE
        frame(0x1, 1, b"\x88", flags=0x5),  # trailers on stream 1: no new stream
    )
)


def test_new_streams_are_counted_however_the_bytes_are_cut() -> None:
    whole = NewStreams().count(CLIENT)
    assert whole == 2
    for cut in range(1, len(CLIENT)):
        streams = NewStreams()
        assert streams.count(CLIENT[:cut]) + streams.count(CLIENT[cut:]) == 2, cut
    one_by_one = NewStreams()
    assert sum(one_by_one.count(CLIENT[i : i + 1]) for i in range(len(CLIENT))) == 2
    # Not HTTP/2: nothing counted (the arena refuses it itself).
    assert NewStreams().count(b"GET / HTTP/1.1\r\n\r\n" + CLIENT) == 0


def test_streams_past_the_pace_wait_in_the_relay(tmp_path: Path) -> None:
    waits: list[float] = []

    async def no_sleep(seconds: float) -> None:
        waits.append(seconds)

    # A stopped clock: the bucket never refills, so every stream past the burst owes more.
    pace = StreamPace(per_s=20.0, burst=50, clock=lambda: 0.0, sleep=no_sleep)

    async def scenario() -> list[grpc.StatusCode]:
        server = await start_private_server(tmp_path / "records")
        forwarder = Forwarder(tmp_path / "arena.sock", server.address, pace=pace)
        await forwarder.start()
        try:
            async with grpc.aio.insecure_channel(f"unix:{tmp_path / 'arena.sock'}") as channel:
                stub = arena_pb2_grpc.ArenaServiceStub(channel)

                async def knock() -> grpc.StatusCode:
                    hello = arena_pb2.PlayRequest(
                        hello=arena_pb2.Hello(protocol_version=1, token="made-up")
                    )
                    try:
                        async for _ in stub.Play(iter([hello])):
                            pass
                    except grpc.aio.AioRpcError as exc:
                        return exc.code()
                    return grpc.StatusCode.OK

                return await asyncio.gather(*(knock() for _ in range(60)))
        finally:
            await forwarder.close()
            await server.stop(grace_s=1)

    codes = asyncio.run(scenario())
    assert set(codes) == {grpc.StatusCode.UNAUTHENTICATED}  # each reached the arena: refused
    assert pace.opened == 61  # the connection, paced as a stream, and its 60 streams
    # Eleven past the burst: they waited, the last 11 / 20 s in all.
    assert waits, "no stream waited"
    assert pace.waited_s == pytest.approx(sum(waits))
    assert waits[-1] == pytest.approx(0.55)
