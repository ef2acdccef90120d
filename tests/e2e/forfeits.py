"""ForfeitSeat checked the same way against every kind of server (one process, or a front
and its workers): its errors, its idempotence, and the forfeits the record keeps."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from medina.referee.outcome import Termination
from medina.v1 import admin_pb2, admin_pb2_grpc, common_pb2, match_pb2
from medina.wire import convert

from .rawbot import RawBot, reason_of

Metadata = tuple[tuple[str, str], ...]


async def refused(
    stub: admin_pb2_grpc.MatchServiceAsyncStub,
    request: admin_pb2.ForfeitSeatRequest,
    metadata: Metadata,
) -> tuple[grpc.StatusCode, str]:
    """The status code and ErrorInfo reason ForfeitSeat is refused with."""
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.ForfeitSeat(request, metadata=metadata, timeout=30)
    code = info.value.code()
    return code, reason_of(code, info.value.trailing_metadata())


async def check_forfeit_seat(address: str, auth: Metadata) -> None:
    """A 3-player match with bots on seats 0 and 1: seat 2 (never connected) and seat 0 (in
    play) forfeit as CRASHED with the server's ``when``; the calls' errors as documented."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = admin_pb2_grpc.MatchServiceStub(channel)
        created = await stub.CreateMatch(
            admin_pb2.CreateMatchRequest(
                config=match_pb2.MatchConfig(
                    ruleset=common_pb2.RULESET_MEDINA_V2, players=3, seed=5
                )
            ),
            metadata=auth,
        )
        match_id = created.match_id

        def ask(seat: int, reason: str = "", match: str = match_id) -> admin_pb2.ForfeitSeatRequest:
            return admin_pb2.ForfeitSeatRequest(match_id=match, seat=seat, reason=reason)

        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await stub.ForfeitSeat(ask(0), timeout=30)
        assert denied.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert await refused(stub, ask(0, match="nope"), auth) == (
            grpc.StatusCode.NOT_FOUND,
            "MATCH_NOT_FOUND",
        )
        for seat in (3, -1):
            assert await refused(stub, ask(seat), auth) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "REQUEST_INVALID",
            )
        tokens = [t.token for t in created.tokens]
        bots = [RawBot(address, tokens[0], keep_status=True), RawBot(address, tokens[1])]
        playing = [asyncio.create_task(b.play()) for b in bots]
        await asyncio.gather(*(b.welcomed.wait() for b in bots))

        absent = await stub.ForfeitSeat(
            ask(2, "its bot exited with code 2"), metadata=auth, timeout=30
        )
        assert absent.detail == "its bot exited with code 2 before connecting"
        assert not absent.ever_connected
        present = await stub.ForfeitSeat(
            ask(0, "its bot exited with code 3"), metadata=auth, timeout=30
        )
        assert present.detail == "its bot exited with code 3 during the match"
        assert present.ever_connected
        # Idempotent: a seat that has forfeited already is OK, and nothing changes.
        again = await stub.ForfeitSeat(ask(0, "something else"), metadata=auth, timeout=30)
        assert again.detail == "" and again.ever_connected

        async with asyncio.timeout(60):
            await asyncio.gather(*playing)  # seat 1 plays the game out alone
        got = await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=match_id), metadata=auth)
        outcome = convert.outcome_from_proto(got.match.result)
        seats = outcome.seats
        assert (seats[0].termination, seats[0].detail) == (
            Termination.CRASHED,
            "its bot exited with code 3 during the match",
        )
        assert (seats[2].termination, seats[2].detail) == (
            Termination.CRASHED,
            "its bot exited with code 2 before connecting",
        )
        assert seats[1].termination is Termination.NORMAL
        assert await refused(stub, ask(1), auth) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "MATCH_ENDED",
        )
