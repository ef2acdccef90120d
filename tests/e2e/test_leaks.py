"""No hidden supply leaks: every message sent to every seat and every spectator, in full
matches of each ruleset and player count, is searched for a supply of another player that
was not revealed before (docs/rules.md section 9). The web viewer's live stream (Server-Sent
Events: the spectator messages as JSON, and the board drawn from them) is checked the same way."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from medina.engine import CONFIGURATIONS, initial_supplies
from medina.engine.variants import get_ruleset
from medina.referee.config import MatchSettings
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.tokens import new_token, same_token
from medina.rpc.single.server import start_server
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, game_pb2, match_pb2
from medina.web import serve_viewer
from medina.wire import convert
from medina_client.messages import RULESET_NAMES
from web.sse import read_events

from .rawbot import RawBot


def supplies(msg: Message, path: str = "") -> Iterator[tuple[str, Message, Message]]:
    """Every Supply inside ``msg``: (path, the message holding it, the supply)."""
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for i, item in enumerate(items):
            where = f"{path}.{field.name}" + (f"[{i}]" if field.is_repeated else "")
            if isinstance(item, game_pb2.Supply):
                yield where, msg, item
            elif isinstance(item, Message):
                yield from supplies(item, where)


def events_in(msg: Message) -> Iterator[game_pb2.Event]:
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for item in items:
            if isinstance(item, game_pb2.Event):
                yield item
            elif isinstance(item, Message):
                yield from events_in(item)


def starting_supplies(config: match_pb2.MatchConfig) -> list[game_pb2.Supply]:
    """Every seat's supply before the first placement, as the rules give it."""
    rules = get_ruleset(RULESET_NAMES[int(config.ruleset)], config.players)
    return [convert.supply_to_proto(x) for x in initial_supplies(rules)]


class LeakChecker:
    """Follows one viewer's message stream; ``check`` returns the leaks in one message."""

    def __init__(self, viewer: int) -> None:
        self.viewer = viewer  # -1 for a spectator
        self.revealed: set[int] = set()  # seats whose SUPPLY_REVEALED event this viewer saw

    def check(self, message: Message) -> list[str]:
        for event in events_in(message):
            if event.WhichOneof("event") == "supply_revealed":
                self.revealed.add(event.supply_revealed.seat)
        leaks = []
        for where, holder, _supply in supplies(message):
            if isinstance(holder, game_pb2.SeatView):
                owner = holder.seat
                if owner == self.viewer:
                    continue
                if holder.revealed and owner in self.revealed:
                    continue
                leaks.append(f"{where}: seat {owner}'s supply shown to viewer {self.viewer}")
            elif isinstance(holder, game_pb2.SupplyRevealed):
                continue  # the reveal itself is public
            elif isinstance(holder, arena_pb2.Welcome) and ".initial_supplies[" in where:
                # The ruleset's starting pieces are public; anything else there is a leak.
                if list(holder.initial_supplies) != starting_supplies(holder.config):
                    leaks.append(f"{where}: not the ruleset's starting supply")
            else:
                leaks.append(f"{where}: a supply in a {type(holder).__name__}")
        return leaks


class JsonLeakChecker:
    """Follows one live page's event stream (JSON): the spectator messages it carries go
    through ``LeakChecker``; in the board view, a seat's supply may appear only once that
    seat's supply was revealed in the stream, and no supply may appear anywhere else."""

    def __init__(self) -> None:
        self.spectator = LeakChecker(-1)

    def check(self, message: Mapping[str, object]) -> list[str]:
        leaks: list[str] = []
        watch = message.get("watch", [])
        assert isinstance(watch, list)
        for i, part in enumerate(watch):
            response = json_format.ParseDict(part, admin_pb2.WatchResponse())
            leaks += [f"watch[{i}]{leak}" for leak in self.spectator.check(response)]
        view = message.get("view")
        seats = view.get("seats", []) if isinstance(view, dict) else []
        for seat in seats:
            if seat.get("supply") is not None and not (
                seat.get("revealed") and seat["seat"] in self.spectator.revealed
            ):
                leaks.append(f"view.seats[{seat['seat']}].supply shown to a spectator")
        rest = {k: v for k, v in message.items() if k != "watch"}
        if isinstance(view, dict):
            rest["view"] = {k: v for k, v in view.items() if k != "seats"}
        leaks += [f"{where}: a supply" for where in _supply_keys(rest, "")]
        return leaks


def _supply_keys(value: object, where: str) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "supply" and item is not None:
                yield f"{where}.{key}"
            yield from _supply_keys(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _supply_keys(item, f"{where}[{i}]")


def random_chooser(seed: int) -> object:
    rng = random.Random(seed)

    def choose(request: arena_pb2.DecisionRequest, _attempt: int) -> game_pb2.Action:
        options = [
            game_pb2.Action(kind=p.kind, square=sq, colour=p.colour)
            for p in request.legal.placements
            for sq in p.squares
        ]
        if request.legal.tea:
            options.append(game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA))
        return rng.choice(options)

    return choose


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_no_message_shows_a_hidden_supply(tmp_path: Path, ruleset: str, players: int) -> None:
    async def main() -> tuple[list[RawBot], list[admin_pb2.WatchResponse], list[Any]]:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        http = await serve_viewer(running, "127.0.0.1", 0)
        try:
            hosted = running.arena.create(MatchSettings(ruleset, players, 31))
            watched: list[admin_pb2.WatchResponse] = []
            page = asyncio.create_task(
                read_events("127.0.0.1", http.port, f"/api/live/{hosted.match_id}/events")
            )

            async def watch() -> None:
                async with grpc.aio.insecure_channel(running.address) as channel:
                    stub = admin_pb2_grpc.SpectatorServiceStub(channel)
                    async for m in stub.Watch(admin_pb2.WatchRequest(match_id=hosted.match_id)):
                        watched.append(m)

            spectator = asyncio.create_task(watch())
            bots = [
                RawBot(running.address, t, chooser=random_chooser(i))  # type: ignore[arg-type]
                for i, t in enumerate(hosted.tokens)
            ]
            await asyncio.gather(*(b.play() for b in bots))
            await spectator
            return bots, watched, await page
        finally:
            await http.stop()
            await running.stop(1)

    bots, watched, streamed = asyncio.run(asyncio.wait_for(main(), 120))
    reveals = 0
    for seat, bot in enumerate(bots):
        checker = LeakChecker(seat)
        assert bot.ended is not None
        for n, message in enumerate(bot.received):
            leaks = checker.check(message)
            assert not leaks, f"message {n} to seat {seat}: {leaks}"
        own = [
            s
            for _w, holder, s in supplies(bot.received[0])
            if isinstance(holder, game_pb2.SeatView) and holder.seat == seat
        ]
        assert len(own) == 1  # the checker does see supplies: the viewer's own
        reveals += len(checker.revealed)
    spectator = LeakChecker(-1)
    assert watched and watched[-1].HasField("result")
    for n, response in enumerate(watched):
        leaks = spectator.check(response)
        assert not leaks, f"spectator message {n}: {leaks}"
    if ruleset == "medina-v1-2p":
        assert reveals, "this game never exercised the running-low reveal"
    page = JsonLeakChecker()
    assert streamed and streamed[-1][0] == "end"
    for n, (_event, data) in enumerate(streamed):
        leaks = page.check(data)
        assert not leaks, f"live page message {n}: {leaks}"
    if ruleset == "medina-v1-2p":
        shown = [s for s in streamed[-1][1]["view"]["seats"] if s["supply"] is not None]
        assert shown, "the live page never showed a revealed supply"


def test_the_checker_catches_a_leak() -> None:
    seat_view = game_pb2.SeatView(seat=1, supply=game_pb2.Supply(stables=3))
    observation = game_pb2.Observation(viewer=0, seats=[game_pb2.SeatView(seat=0), seat_view])
    message = arena_pb2.PlayResponse(request=arena_pb2.DecisionRequest(observation=observation))
    assert LeakChecker(0).check(message) == [
        ".request.observation.seats[1].supply: seat 1's supply shown to viewer 0"
    ]
    # Marked revealed but never announced: still a leak.
    seat_view.revealed = True
    message.request.observation.seats[1].CopyFrom(seat_view)
    assert len(LeakChecker(0).check(message)) == 1
    reveal = game_pb2.Event(
        supply_revealed=game_pb2.SupplyRevealed(seat=1, supply=game_pb2.Supply(stables=3))
    )
    message.request.observation.events.append(reveal)
    assert LeakChecker(0).check(message) == []
    assert LeakChecker(-1).check(message) == []
    stray = arena_pb2.PlayResponse(
        ended=arena_pb2.MatchEnded(
            observation=game_pb2.Observation(
                seats=[game_pb2.SeatView(seat=2, supply=game_pb2.Supply())]
            )
        )
    )
    assert LeakChecker(0).check(stray) == [
        ".ended.observation.seats[0].supply: seat 2's supply shown to viewer 0"
    ]


def test_the_live_page_checker_catches_a_leak() -> None:
    hidden = {"seat": 1, "revealed": False, "supply": {"stables": 3}}
    message: dict[str, object] = {"watch": [], "view": {"seats": [hidden]}}
    assert JsonLeakChecker().check(message) == ["view.seats[1].supply shown to a spectator"]
    # Marked revealed but never announced in the stream: still a leak.
    hidden["revealed"] = True
    assert len(JsonLeakChecker().check(message)) == 1
    reveal = {"update": {"events": [{"index": 5, "supplyRevealed": {"seat": 1, "supply": {}}}]}}
    checker = JsonLeakChecker()
    assert checker.check({"watch": [reveal], "view": {"seats": [hidden]}}) == []
    stray = {"watch": [], "view": {"seats": [], "extra": [{"supply": {"walls": 1}}]}}
    assert JsonLeakChecker().check(stray) == [".view.extra[0].supply: a supply"]
    shown = {"snapshot": {"seats": [{"seat": 2, "supply": {"walls": 1}}]}}
    assert JsonLeakChecker().check({"watch": [shown]}) == [
        "watch[0].snapshot.seats[0].supply: seat 2's supply shown to viewer -1"
    ]


def test_tokens_never_reach_logs_records_or_summaries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)

    async def main() -> tuple[list[str], str]:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 3, 5))
            bots = [RawBot(running.address, t) for t in hosted.tokens]
            # One bot drops and resumes, so resume tokens are used too.
            bots[0].leave_after_requests = 2
            tasks = [asyncio.create_task(b.play()) for b in bots[1:]]
            await bots[0].play()
            bots[0].leave_after_requests = -1
            await bots[0].play()
            assert bots[0].ended is not None
            await asyncio.gather(*tasks)
            async with grpc.aio.insecure_channel(running.address) as channel:
                listed = await admin_pb2_grpc.MatchServiceStub(channel).ListMatches(
                    admin_pb2.ListMatchesRequest()
                )
            secrets = [*hosted.tokens, *hosted.resume_tokens]
            return secrets, str(listed) + hosted.record_path.read_text()
        finally:
            await running.stop(1)

    secrets, written = asyncio.run(asyncio.wait_for(main(), 60))
    assert caplog.records, "nothing was logged: the check would be empty"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for secret in secrets:
        assert secret not in logged
        assert secret not in written


def test_tokens_are_fresh_192_bit_secrets_compared_whole() -> None:
    tokens = {new_token() for _ in range(1000)}
    assert len(tokens) == 1000
    assert all(len(t) == 48 and int(t, 16) >= 0 and not t.startswith("-") for t in tokens)
    token = next(iter(tokens))
    assert same_token(token, token) and not same_token(token, token[:-1])
    assert not same_token(token[:-1] + "0", token[:-1] + "1")
