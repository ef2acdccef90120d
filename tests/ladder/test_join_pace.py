"""How often one bot may open a lobby stream (ladder/service.py: JoinPace), and the clients
waiting out the ladder's ``retry_after_ms`` (medina_client/ladder.py)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from medina.v1 import ladder_pb2
from medina_client.bots import RandomBot
from medina_client.ladder import play_ladder, seat_player
from medina_client.status import status_info

from .test_lobby_faults import CONFIG, add, auth, hello, refusal, run, serving, until

pytestmark = pytest.mark.timeout(120)

LEAVE = ladder_pb2.LobbyRequest(leave=ladder_pb2.Leave())


def test_a_bot_saying_hello_and_leaving_in_a_loop_is_paced_and_others_are_not(
    tmp_path: Path,
) -> None:
    # A key holder saying hello and leaving 60 times in half a second cost a presence write
    # each time, and the matches formed around it were stored, then dropped.
    config = replace(CONFIG, joins_per_minute=5)

    async def scenario() -> tuple[list[tuple[grpc.StatusCode, str]], dict[str, str], str]:
        async with serving(str(tmp_path / "ladder.db"), tmp_path, config) as (_l, _a, stub):
            looper, other = await add(stub, "looper"), await add(stub, "other")
            ends = [
                await refusal(stub.Lobby(iter([hello(), LEAVE]), metadata=auth(looper)))
                for _ in range(5)
            ]
            # Hello alone: a Leave still being written when the call is refused would make
            # the client's library report INTERNAL instead.
            call = stub.Lobby(iter([hello()]), metadata=auth(looper))
            try:
                async with asyncio.timeout(20):
                    async for _ in call:
                        raise AssertionError("the sixth join in a minute was welcomed")
            except grpc.aio.AioRpcError as exc:
                ends.append((exc.code(), status_info(exc.trailing_metadata()).reason))
                paced = status_info(exc.trailing_metadata()).metadata
                details = exc.details() or ""
            ends.append(await refusal(stub.Lobby(iter([hello(), LEAVE]), metadata=auth(other))))
            return ends, paced, details

    ends, paced, details = run(scenario)
    assert ends[:5] == [(grpc.StatusCode.OK, "")] * 5
    assert ends[5] == (grpc.StatusCode.RESOURCE_EXHAUSTED, "JOINING_TOO_OFTEN")
    assert ends[6] == (grpc.StatusCode.OK, "")  # the pace is the looper's alone
    # One join comes back every 12 s at 5 a minute: the hint is the wait for it.
    assert 10_000 < int(paced["retry_after_ms"]) <= 12_000, paced
    assert paced["limit"] == "5"
    assert "'looper' opened 5 lobby streams within a minute" in details, details


def test_streams_refused_for_another_reason_are_not_joins(tmp_path: Path) -> None:
    config = replace(CONFIG, joins_per_minute=1)

    async def scenario() -> list[tuple[grpc.StatusCode, str]]:
        async with serving(str(tmp_path / "ladder.db"), tmp_path, config) as (_l, _a, stub):
            key = await add(stub, "bot")
            bad = hello(bot_version="x" * 500)  # over the version's length: refused
            ends = [await refusal(stub.Lobby(iter([bad]), metadata=auth(key))) for _ in range(3)]
            ends.append(await refusal(stub.Lobby(iter([hello(), LEAVE]), metadata=auth(key))))
            return ends

    ends = run(scenario)
    assert ends[:3] == [(grpc.StatusCode.INVALID_ARGUMENT, "LOBBY_HELLO_INVALID")] * 3
    assert ends[3] == (grpc.StatusCode.OK, "")


def test_the_sdk_waits_out_the_ladders_retry_hint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The SDK retried after 0.5 s, 1 s, 2 s whatever the ladder asked: each retry inside the
    # hint was refused again, and counted.
    caplog.set_level(logging.WARNING, logger="medina_client")
    config = replace(CONFIG, joins_per_minute=2)

    async def scenario() -> None:
        async with serving(str(tmp_path / "ladder.db"), tmp_path, config) as (_l, address, stub):
            key = await add(stub, "bot")
            for _ in range(2):
                ended = await refusal(stub.Lobby(iter([hello(), LEAVE]), metadata=auth(key)))
                assert ended == (grpc.StatusCode.OK, "")
            player = asyncio.create_task(
                play_ladder(seat_player(lambda: RandomBot(1)), address, key)
            )
            try:
                await until(
                    lambda: any("connecting again" in r.getMessage() for r in caplog.records)
                )
            finally:
                player.cancel()
                await asyncio.gather(player, return_exceptions=True)

    run(scenario)
    said = [r.getMessage() for r in caplog.records if "connecting again" in r.getMessage()]
    assert len(said) == 1, said
    assert "JOINING_TOO_OFTEN" in said[0], said
    # 2 joins a minute: the next one in 30 s, not the backoff's first 0.5 s.
    wait = float(said[0].rsplit("connecting again in ", 1)[1].removesuffix(" s"))
    assert 25.0 < wait <= 30.0, said
