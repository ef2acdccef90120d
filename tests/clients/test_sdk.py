"""The Python bot SDK against a real server on 127.0.0.1: play, errors, reconnect, tracker."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import grpc
import pytest
from bounded import run
from medina.engine import Action, ActionKind, apply_action, legal_moves, new_game, result
from medina.records.reader import read_record
from medina.referee.config import MatchSettings
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import game_pb2, match_pb2, record_pb2
from medina.wire.convert import events_to_proto, settings_to_proto
from medina_client import Bot, HandshakeError, LocalStateError, Turn, play
from medina_client.bots import GreedyBot, RandomBot
from medina_client.tracker import GameTracker


async def server(tmp: Path) -> RunningServer:
    return await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp))


@pytest.mark.parametrize(
    ("ruleset", "players"),
    [("medina-v2", 4), ("medina-v2", 2), ("medina-v1", 3), ("medina-v1-2p", 2)],
)
def test_sdk_bots_play_full_matches(tmp_path: Path, ruleset: str, players: int) -> None:
    async def main() -> None:
        running = await server(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings(ruleset, players, 11))
            bots: list[Bot] = [GreedyBot(i) if i % 2 else RandomBot(i) for i in range(players)]
            results = await asyncio.gather(
                *(play(b, running.address, t) for b, t in zip(bots, hosted.tokens, strict=True))
            )
            assert hosted.task is not None
            outcome = await hosted.task
            assert outcome.complete
            assert all(r.ending == match_pb2.MATCH_ENDING_COMPLETE for r in results)
            assert [s.total for s in results[0].seats] == [s.total for s in outcome.seats]
            assert {s.termination.name for s in outcome.seats} == {"NORMAL"}
        finally:
            await running.stop(1)

    run(main())


def test_unknown_token_is_a_handshake_error(tmp_path: Path) -> None:
    async def main() -> None:
        running = await server(tmp_path)
        try:
            with pytest.raises(HandshakeError) as info:
                await play(RandomBot(), running.address, "not-a-token")
            assert info.value.code is grpc.StatusCode.UNAUTHENTICATED
            assert "unknown seat token" in info.value.details
        finally:
            await running.stop(1)

    run(main())


class DropOnce(Bot):
    """Plays randomly; after its third decision the test drops its stream from the server."""

    def __init__(self, drop: asyncio.Event) -> None:
        self.rng = random.Random(1)
        self.decisions = 0
        self.starts = 0
        self.drop = drop

    def on_start(self, welcome: object) -> None:
        self.starts += 1

    def choose(self, turn: Turn) -> object:  # type: ignore[override]
        self.decisions += 1
        if self.decisions == 3:
            self.drop.set()
        return turn.legal[self.rng.randrange(len(turn.legal))]


def test_play_reconnects_with_the_resume_token(tmp_path: Path) -> None:
    async def main() -> None:
        running = await server(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 5))
            drop = asyncio.Event()
            dropper = DropOnce(drop)

            async def cut() -> None:
                await drop.wait()
                conn = hosted.seats[0].connection
                assert conn is not None
                conn.close()  # the server ends the stream cleanly: the bot must come back

            cutter = asyncio.create_task(cut())
            await asyncio.gather(
                play(dropper, running.address, hosted.tokens[0]),
                play(RandomBot(2), running.address, hosted.tokens[1]),
            )
            await cutter
            assert hosted.task is not None
            outcome = await hosted.task
            assert dropper.starts == 2
            assert outcome.seats[0].termination.name == "NORMAL"
        finally:
            await running.stop(1)

    run(main())


def test_tracker_rebuilds_the_game_from_events() -> None:
    s = new_game("medina-v1", 3, 4)
    rng = random.Random(4)
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    settings = settings_to_proto(MatchSettings("medina-v1", 3, 4))
    tracker = GameTracker(settings)
    events = events_to_proto(0, s.events)
    tracker.feed(events[:50])
    tracker.feed(events[30:])  # overlaps are skipped by index
    assert tracker.state.over
    assert result(tracker.state) == result(s)


def test_tracker_reports_a_gap() -> None:
    tracker = GameTracker(settings_to_proto(MatchSettings("medina-v2", 2, 1)))
    tracker.feed([game_pb2.Event(index=5, placed=game_pb2.Placed())])  # only queued
    with pytest.raises(LocalStateError, match="history gap: expected event 1, got 5"):
        _ = tracker.state
    with pytest.raises(LocalStateError, match="history gap"):  # and it stays broken
        _ = tracker.state


def test_gain_takes_the_best_immediate_gain() -> None:
    s = new_game("medina-v2", 2, 3)
    rng = random.Random(3)
    for _ in range(30):
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    seat = s.to_move
    before = result(s).totals[seat]
    gains = {
        a: result(apply_action(s, a)).totals[seat] - before
        for a in legal_moves(s).actions()
        if a.kind is not ActionKind.TEA
    }
    from medina.strategies import gain_action

    chosen = gain_action(s, random.Random(0))
    assert gains[chosen] == max(gains.values())


def test_a_bot_without_updates_keeps_the_same_local_state(tmp_path: Path) -> None:
    async def main() -> None:
        running = await server(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 3, 12))
            quiet = StateChecker()
            results = await asyncio.gather(
                play(quiet, running.address, hosted.tokens[0], omit_updates=True),
                play(RandomBot(2), running.address, hosted.tokens[1]),
                play(GreedyBot(3), running.address, hosted.tokens[2]),
            )
            assert hosted.task is not None
            outcome = await hosted.task
            assert outcome.complete and {s.termination.name for s in outcome.seats} == {"NORMAL"}
            assert all(r.ending == match_pb2.MATCH_ENDING_COMPLETE for r in results)
            assert quiet.checked > 20 and quiet.problems == []
        finally:
            await running.stop(1)

    run(main())


class StateChecker(Bot):
    """Rebuilds the game locally at every decision and keeps any way it went wrong."""

    name = "state-checker"

    def __init__(self) -> None:
        self.checked = 0
        self.problems: list[str] = []

    def choose(self, turn: Turn) -> Action:
        try:
            state = turn.state()  # checked against the observation by the SDK
            assert state.to_move == turn.seat
            self.checked += 1
        except (LocalStateError, AssertionError) as exc:
            self.problems.append(str(exc))
        return turn.legal[0]


def test_the_example_bots_play_another_first_edition_game_for_another_match_seed(
    tmp_path: Path,
) -> None:
    # medina-v1's setup draws nothing from the seed: only the bots, seeded by the match
    # (no seed of their own), make seed 2 another game than seed 1.
    async def game(running: RunningServer, seed: int) -> list[tuple[int, str]]:
        hosted = running.arena.create(MatchSettings("medina-v1", 3, seed))
        bots = [RandomBot(), GreedyBot(), RandomBot()]
        await asyncio.gather(
            *(play(b, running.address, t) for b, t in zip(bots, hosted.tokens, strict=True))
        )
        assert hosted.task is not None
        assert (await hosted.task).complete
        record = read_record(hosted.record_path)
        decisions = [e.decision for _, e in record.entries if e.HasField("decision")]
        assert {d.source for d in decisions} == {record_pb2.DECISION_SOURCE_BOT}
        return [(d.seat, d.action.SerializeToString(deterministic=True).hex()) for d in decisions]

    async def main() -> list[list[tuple[int, str]]]:
        running = await server(tmp_path)
        try:
            return [await game(running, seed) for seed in (1, 2, 1)]
        finally:
            await running.stop(1)

    one, two, one_again = run(main(), timeout=120)
    assert one == one_again
    assert one != two
