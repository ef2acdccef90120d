"""Protocol 1.1 over real gRPC on 127.0.0.1: what a bot learns (features, supplies, scores,
the clock, refusals as data, the referee's own moves, forfeits), errors as ErrorInfo, and
idempotent CreateMatch; and a 1.0 bot (no new field used) still plays."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from bounded import run
from medina.engine import initial_supplies, squares_named
from medina.engine.geometry import geometry
from medina.engine.variants import get_ruleset
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, common_pb2, game_pb2, match_pb2
from medina.wire import convert
from medina.wire.shared.protocol import ALWAYS_ON

from .rawbot import RawBot, first_legal, reason_of

FAST = TimeControl(decision_ms=300, bank_ms=0, first_decision_extra_ms=0, grace_ms=50)


async def serve(tmp: Path) -> RunningServer:
    return await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp))


def placed(bot: RawBot) -> list[game_pb2.Placed]:
    """Every Placed event the bot saw (updates, requests and the end), each index once."""
    seen: dict[int, game_pb2.Placed] = {}
    for m in bot.received:
        kind = m.WhichOneof("message")
        events = (
            m.update.events
            if kind == "update"
            else m.request.observation.events
            if kind == "request"
            else m.ended.observation.events
            if kind == "ended"
            else []
        )
        for e in events:
            if e.HasField("placed"):
                seen[e.index] = e.placed
    return [seen[i] for i in sorted(seen)]


def test_a_1_0_bot_plays_and_a_1_1_bot_learns_the_new_facts(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            settings = MatchSettings("medina-v2", 2, 5, time=TimeControl(bank_ms=60_000))
            hosted = running.arena.create(settings)
            old = RawBot(running.address, hosted.tokens[0])  # protocol 1.0: no new field
            new = RawBot(
                running.address,
                hosted.tokens[1],
                protocol_minor=1,
                features=("forfeit-notices", "no-such-feature"),
            )
            await asyncio.gather(old.play(), new.play())
        finally:
            await running.stop(1)
        assert old.ended is not None and new.ended is not None
        assert old.welcome is not None and new.welcome is not None
        assert old.welcome.protocol_minor == new.welcome.protocol_minor == 1
        assert list(old.welcome.features) == list(ALWAYS_ON)
        assert list(new.welcome.features) == [*ALWAYS_ON, "forfeit-notices"]
        rules = get_ruleset("medina-v2", 2)
        supplies = [convert.supply_to_proto(x) for x in initial_supplies(rules)]
        assert list(new.welcome.initial_supplies) == supplies
        # The seat's own supply before its first placement is the initial one.
        first = new.of_kind("request")[0].request.observation
        assert first.seats[1].supply == supplies[1]
        for m in new.of_kind("request"):
            clock = m.request.clock
            assert clock.HasField("bank_left_ms") and clock.bank_left_ms == clock.bank_ms
            assert clock.strikes_left == 2  # 3 strikes forfeit: two timeouts may still come
            assert all(v.HasField("score") for v in m.request.observation.seats)
        final = new.ended.result
        last = new.ended.observation
        assert [v.score.total for v in last.seats] == [s.total for s in final.seats]
        assert not any(p.by_referee for p in placed(new))  # both bots chose every move

    run(main())


def test_the_referees_moves_are_marked_and_a_forfeit_is_announced(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            settings = MatchSettings(
                "medina-v2",
                3,
                6,
                time=FAST,
                policies=Policies(on_timeout=TimeoutPolicy.RANDOM_ACTION, max_strikes=2),
            )
            hosted = running.arena.create(settings)
            silent = RawBot(running.address, hosted.tokens[0], chooser=lambda _r, _a: None)
            silent.features = ("forfeit-notices",)
            listener = RawBot(running.address, hosted.tokens[1], features=("forfeit-notices",))
            old = RawBot(running.address, hosted.tokens[2])
            await asyncio.gather(silent.play(), listener.play(), old.play())
        finally:
            await running.stop(1)
        # Seat 0 never answered: its first timeout is a strike (strikes_left 1, then 0), its
        # second forfeits it; every one of its moves was the referee's, and marked so.
        clocks = [m.request.clock for m in silent.of_kind("request")]
        assert [c.strikes_left for c in clocks[:2]] == [1, 0]
        assert not clocks[0].HasField("bank_left_ms")  # no bank, not an empty one
        by_seat = [p for p in placed(listener) if p.seat == 0]
        assert by_seat and all(p.by_referee for p in by_seat)
        assert not any(p.by_referee for p in placed(listener) if p.seat != 0)
        for bot in (silent, listener):
            notices = [m.forfeited for m in bot.of_kind("forfeited")]
            assert len(notices) == 1
            assert notices[0].seat == 0 and notices[0].termination == match_pb2.TERMINATION_TIMEOUT
            assert notices[0].strikes == 2 and "ran out of time" in notices[0].detail
        assert old.of_kind("forfeited") == []  # a 1.0 bot never gets a kind it does not know
        assert old.ended is not None

    run(main())


def test_a_refusal_names_its_squares_as_data(tmp_path: Path) -> None:
    def building_off_the_city(
        request: arena_pb2.DecisionRequest, attempt: int
    ) -> game_pb2.Action | None:
        if attempt == 0:  # a building on a tower: refused, naming the square
            return game_pb2.Action(
                kind=game_pb2.ACTION_KIND_BUILDING, square=0, colour=common_pb2.PALACE_COLOUR_GREY
            )
        return first_legal(request, attempt)

    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 7))
            bots = [RawBot(running.address, hosted.tokens[0], chooser=building_off_the_city)]
            bots.append(RawBot(running.address, hosted.tokens[1]))
            await asyncio.gather(*(b.play() for b in bots))
        finally:
            await running.stop(1)
        g = geometry(16, 12)
        rejected = [m.rejected for m in bots[0].of_kind("rejected")]
        assert rejected
        for r in rejected:
            assert r.squares and r.squares[0] == 0
            assert list(r.squares) == [0, *(q for q in squares_named(g, r.message) if q != 0)]

    run(main())


def test_an_unsupported_protocol_version_and_a_forfeited_seat_say_why(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(
                MatchSettings(
                    "medina-v2",
                    3,
                    8,
                    time=FAST,
                    policies=Policies(on_timeout=TimeoutPolicy.FORFEIT),
                )
            )
            future = RawBot(running.address, hosted.tokens[0], protocol_version=2)
            future.keep_status = True
            await future.play()
            assert future.status is grpc.StatusCode.FAILED_PRECONDITION
            assert future.reason == "PROTOCOL_VERSION_UNSUPPORTED"
            silent = RawBot(running.address, hosted.tokens[0], chooser=lambda _r, _a: None)
            others = [RawBot(running.address, t) for t in hosted.tokens[1:]]
            tasks = [asyncio.create_task(b.play()) for b in (silent, *others)]
            async with asyncio.timeout(20):
                while not hosted.match.is_forfeited(0):
                    await asyncio.wait(tasks, timeout=0.05)
            back = RawBot(running.address, hosted.tokens[0], keep_status=True)
            await back.play()
            assert back.status is grpc.StatusCode.FAILED_PRECONDITION
            assert back.reason == "SEAT_FORFEITED"
            await asyncio.gather(*tasks)
        finally:
            await running.stop(1)

    run(main())


def test_a_bot_name_a_console_cannot_show_is_refused_naming_the_field(tmp_path: Path) -> None:
    # A name holding a newline and ESC was taken: the `match` scoreboard and `replay show`
    # printed it raw (a line broken, the terminal recoloured), and the record kept it.
    async def main() -> list[tuple[grpc.StatusCode | None, str, str]]:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 8))
            said = []
            for name in ("evil\nname\x1b[31m", "n" * 129, "tab\there"):
                bot = RawBot(running.address, hosted.tokens[0], name=name, keep_status=True)
                await bot.play()
                said.append((bot.status, bot.reason, bot.details))
            fine = [RawBot(running.address, t, name="n" * 128) for t in hosted.tokens]
            await asyncio.gather(*(b.play() for b in fine))
            assert all(b.ended is not None for b in fine)  # 128 characters play
            return said
        finally:
            await running.stop(1)

    said = run(main())
    assert [(code, reason) for code, reason, _ in said] == [
        (grpc.StatusCode.INVALID_ARGUMENT, "HELLO_INVALID")
    ] * 3
    assert "Hello.bot_name 'evil\\nname\\x1b[31m' holds a control character (U+000A)" in said[0][2]
    assert "Hello.bot_name is longer than 128 characters" in said[1][2]
    assert "(U+0009)" in said[2][2]


def test_create_match_is_idempotent_by_request_id(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                config = match_pb2.MatchConfig(
                    ruleset=common_pb2.RULESET_MEDINA_V2, players=2, seed=3
                )
                ask = admin_pb2.CreateMatchRequest(config=config, request_id="cup-1/game-7")
                first, again, concurrent = await asyncio.gather(
                    stub.CreateMatch(ask), stub.CreateMatch(ask), stub.CreateMatch(ask)
                )
                assert first == again == concurrent  # one match, the same tokens
                assert len(running.arena.matches) == 1
                other = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config))
                assert other.match_id != first.match_id  # no id: a new match every call
                reused = admin_pb2.CreateMatchRequest(request_id="cup-1/game-7")
                reused.config.CopyFrom(config)
                reused.config.seed = 4
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.CreateMatch(reused)
                assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert reason_of(info.value.code(), info.value.trailing_metadata()) == (
                    "REQUEST_ID_REUSED"
                )
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.CreateMatch(
                        admin_pb2.CreateMatchRequest(config=config, request_id="x" * 129)
                    )
                assert reason_of(info.value.code(), info.value.trailing_metadata()) == (
                    "REQUEST_INVALID"
                )
                bad = admin_pb2.CreateMatchRequest(request_id="bad")
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.CreateMatch(bad)  # no ruleset: refused, and not remembered
                assert reason_of(info.value.code(), info.value.trailing_metadata()) == (
                    "MATCH_CONFIG_INVALID"
                )
                bad.config.CopyFrom(config)
                fixed = await stub.CreateMatch(bad)
                assert fixed.match_id not in (first.match_id, other.match_id)
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.GetMatch(admin_pb2.GetMatchRequest(match_id="nope"))
                assert reason_of(info.value.code(), info.value.trailing_metadata()) == (
                    "MATCH_NOT_FOUND"
                )
        finally:
            await running.stop(1)

    run(main())
