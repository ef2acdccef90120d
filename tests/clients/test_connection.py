"""The connection layer: handshake statuses become typed errors; plaintext and TLS channels."""

from __future__ import annotations

import asyncio
import socket

import grpc
import pytest
from medina.engine import new_game
from medina.v1 import arena_pb2
from medina_client import ConnectionLost, HandshakeError, ProtocolError, play
from medina_client.bots import RandomBot
from medina_client.connection import Connection, channel_credentials
from medina_client.messages import hello

from .fake_arena import FakeStream, ended, fake_server, run, welcome

REFUSALS = [
    (grpc.StatusCode.UNAUTHENTICATED, "unknown seat token"),
    (grpc.StatusCode.FAILED_PRECONDITION, "protocol version 2 is not supported"),
    (grpc.StatusCode.FAILED_PRECONDITION, "seat 1 has forfeited and cannot be taken up again"),
    (grpc.StatusCode.ALREADY_EXISTS, "seat 0 is already taken"),
    (grpc.StatusCode.INVALID_ARGUMENT, "the first message of a stream must be Hello"),
    (grpc.StatusCode.PERMISSION_DENIED, "not for you"),
]


@pytest.mark.parametrize(("code", "details"), REFUSALS)
def test_a_refused_handshake_is_a_handshake_error(code: grpc.StatusCode, details: str) -> None:
    async def refuse(stream: FakeStream) -> None:
        await stream.hello()
        stream.abort(code, details)

    async def main() -> None:
        async with fake_server([refuse]) as (arena, address):
            with pytest.raises(HandshakeError) as info:
                await play(RandomBot(), address, "tok")
        assert arena.streams == 1  # not retried
        assert info.value.code is code
        assert info.value.details == details
        assert str(info.value) == f"handshake refused ({code.name}): {details}"

    run(main())


def test_connection_returns_the_welcome() -> None:
    s = new_game("medina-v2", 3, 2)

    async def accept(stream: FakeStream) -> None:
        assert (await stream.hello()).token == "tok"
        stream.send(welcome(s, 2, resume_token="secret"))

    async def main() -> arena_pb2.Welcome:
        async with fake_server([accept]) as (_, address), Connection(address) as conn:
            return await conn.handshake(hello("tok", "b", "1"))

    got = run(main())
    assert (got.seat, got.resume_token, got.config.players) == (2, "secret", 3)


def test_anything_but_welcome_first_is_a_protocol_error() -> None:
    async def rude(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(arena_pb2.PlayResponse(notice=arena_pb2.Notice(message="hi")))

    async def main() -> None:
        async with fake_server([rude]) as (_, address):
            with pytest.raises(ProtocolError, match="expected Welcome, got notice"):
                await play(RandomBot(), address, "tok")

    run(main())


def test_no_welcome_in_time_is_a_lost_connection() -> None:
    answer = asyncio.Event()

    async def silent(stream: FakeStream) -> None:
        await stream.hello()
        await answer.wait()  # released by the test once the client gave up

    async def main() -> None:
        async with fake_server([silent]) as (_, address):
            async with Connection(address, handshake_timeout_s=0.2) as conn:
                with pytest.raises(ConnectionLost, match="no Welcome"):
                    await conn.handshake(hello("tok", "b", "1"))
            answer.set()

    run(main())


def test_channel_credentials() -> None:
    assert channel_credentials(None, None, None) is None
    assert isinstance(channel_credentials(b"ca"), grpc.ChannelCredentials)
    with pytest.raises(ValueError, match="both the client certificate and its key"):
        channel_credentials(b"ca", b"cert", None)


def test_a_refused_connection_asks_whether_a_server_runs_there() -> None:
    async def main() -> str:
        with socket.socket() as probe:  # a free port nobody listens on
            probe.bind(("127.0.0.1", 0))
            address = f"127.0.0.1:{probe.getsockname()[1]}"
        try:
            async with Connection(address, handshake_timeout_s=10) as conn:
                await conn.handshake(hello("t", "b", "1"))
        except ConnectionLost as exc:
            return str(exc)
        return "connected"

    text = run(main())
    assert "UNAVAILABLE" in text and "is a Medina Arena server running at 127.0.0.1:" in text


def test_leaving_after_match_ended_lets_the_server_end_the_stream() -> None:
    """After MatchEnded the SDK half-closes and waits for the server's status rather than
    cancelling the stream (a cancelled stream costs the server memory inside gRPC). The
    server here ends the stream only once the bot has half-closed, so a bot that closed its
    connection straight away would see CANCELLED."""
    s = new_game("medina-v2", 2, 3)

    async def end_after_the_half_close(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, 0))
        stream.send(ended(2))
        assert await stream.inbox.get() is None  # the bot's side is closed, nothing else came

    async def main() -> Connection:
        async with fake_server([end_after_the_half_close]) as (_, address):
            async with Connection(address) as conn:
                await conn.handshake(hello("tok", "b", "1"))
                async for message in conn.messages():
                    assert message.WhichOneof("message") == "ended"
                    break  # as the runner leaves at MatchEnded
            return conn

    assert run(main()).final_status is grpc.StatusCode.OK


def test_leaving_on_an_error_half_closes_and_lets_the_server_end_the_stream() -> None:
    """A bot's error (a policy's bug) leaves as after MatchEnded: the server sees a clean
    half-close, so the seat always counts as disconnected (a cancelled stream reads as
    crashed or disconnected, as the server's timing falls)."""
    s = new_game("medina-v2", 2, 3)

    async def end_after_the_half_close(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, 0))
        assert await stream.inbox.get() is None  # half-closed, not cancelled

    async def main() -> Connection:
        async with fake_server([end_after_the_half_close]) as (_, address):
            with pytest.raises(RuntimeError, match="the bot gave up"):
                async with Connection(address) as conn:
                    await conn.handshake(hello("tok", "b", "1"))
                    raise RuntimeError("the bot gave up")
            return conn

    assert run(main()).final_status is grpc.StatusCode.OK


def test_leaving_when_cancelled_cancels_the_stream() -> None:
    s = new_game("medina-v2", 2, 3)
    never = asyncio.Event()

    async def hold(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, 0))
        await never.wait()  # ends only when the bot cancels

    async def main() -> Connection:
        async with fake_server([hold]) as (_, address):
            with pytest.raises(asyncio.CancelledError):
                async with Connection(address) as conn:
                    await conn.handshake(hello("tok", "b", "1"))
                    raise asyncio.CancelledError
            return conn

    assert run(main()).final_status is grpc.StatusCode.CANCELLED
