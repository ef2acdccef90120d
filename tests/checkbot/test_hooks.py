"""The seams check-bot uses, none of them in the match loop: a scripted opening in the
settings (the game starts after it), the drills on a seat's way to the referee, local seats."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from medina.checkbot.drills import Drills, drill_message
from medina.engine import Action, ActionKind, apply_action, new_game
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings, TimeControl
from medina.referee.errors import ConfigError
from medina.referee.local import LocalSeat, random_policy
from medina.referee.match import Match
from medina.referee.record import DecisionSource, ErrorCode, MemorySink
from medina.referee.seat import DecisionRequest, RejectionNotice, Signal
from medina.rpc.single.host import Arena
from medina.rpc.single.local_matches import summary
from medina.strategies import random_action
from medina.wire.convert import action_to_proto

T = TypeVar("T")
SETTINGS = MatchSettings("medina-v2", 2, 5, time=TimeControl(decision_ms=60_000, grace_ms=10))


def run(coro: Coroutine[Any, Any, T]) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(20):
            return await coro

    return asyncio.run(bounded())


def opening_of(settings: MatchSettings, length: int, seed: int = 3) -> list[Action]:
    """``length`` random legal actions from the settings' setup."""
    rng = random.Random(seed)
    s = new_game(settings.ruleset, settings.players, settings.seed)
    actions = []
    for _ in range(length):
        action = random_action(s, rng)
        actions.append(action)
        s = apply_action(s, action)
    return actions


class Recorder:
    """A local seat's policy that keeps every request it was sent and its answers."""

    def __init__(self, seed: int) -> None:
        self.requests: list[DecisionRequest] = []
        self.answers: list[Action] = []
        self.policy = random_policy(seed)

    def __call__(self, state: Any, request: DecisionRequest) -> Action:
        self.requests.append(request)
        self.answers.append(self.policy(state, request))
        return self.answers[-1]


class RetryingSeat(LocalSeat):
    """A local seat that answers a refused request again (LocalSeat only keeps the notice)."""

    last: DecisionRequest | None = None

    def request(self, request: DecisionRequest) -> None:
        self.last = request
        super().request(request)

    def reject(self, notice: RejectionNotice) -> None:
        super().reject(notice)
        assert self.last is not None and self.last.request_id == notice.request_id
        self.request(self.last)


def local_match(
    settings: MatchSettings, policies: list[Any], wrap: Any = None
) -> tuple[Match, list[RetryingSeat]]:
    """A match of retrying local seats; ``wrap(seat, submit)`` may screen a seat's replies."""
    holder: list[Match] = []

    def submit(signal: Signal) -> None:
        holder[0].submit(signal)

    seats = [
        RetryingSeat(seat, p, wrap(seat, submit) if wrap else submit)
        for seat, p in enumerate(policies)
    ]
    match = Match("m", settings, seats, MemorySink(), connected=[True] * len(seats))
    holder.append(match)
    for seat in seats:
        seat.state = lambda: match.state
    return match, seats


def test_the_game_starts_after_the_opening_and_the_record_keeps_it(tmp_path: Path) -> None:
    opening = opening_of(SETTINGS, 40)
    settings = replace(SETTINGS, opening=tuple(opening))
    recorders = [Recorder(1), Recorder(2)]
    match, _seats = local_match(settings, recorders)
    assert match.state.decisions == 40  # the match begins at the scripted position
    outcome = run(match.run())
    assert outcome.complete
    sink = match.sink
    assert isinstance(sink, MemorySink)
    assert sink.decisions[0].index == 40 and sink.decisions[0].source is DecisionSource.BOT
    expected = new_game("medina-v2", 2, 5)
    for action in opening:
        expected = apply_action(expected, action)
    first = next(r for seat in recorders for r in seat.requests if r.request_id == 1)
    assert first.seat == expected.to_move
    assert first.observation.first_event == 0  # the first request carries the whole history
    assert len(first.observation.events) == expected.n_events


def test_an_illegal_opening_is_refused_with_the_settings() -> None:
    opening = (*opening_of(SETTINGS, 3), Action(ActionKind.WALL, 0))  # A1 is a tower
    with pytest.raises(ConfigError, match="A1"):
        replace(SETTINGS, opening=opening)


def test_a_drill_refuses_a_legal_reply_once_and_the_seat_answers_again() -> None:
    drills: list[Drills] = []

    def wrap(seat: int, submit: Any) -> Any:
        if seat != 1:
            return submit
        drills.append(Drills(1, 2, 0, submit, lambda: None))
        return drills[0]

    bot = Recorder(2)
    match, seats = local_match(SETTINGS, [Recorder(1), bot], wrap)
    outcome = run(match.run())
    assert outcome.complete
    sink = match.sink
    assert isinstance(sink, MemorySink)
    drilled = [d for d in sink.decisions if d.rejections]
    assert len(drilled) == 1 and drilled[0].seat == 1
    assert drilled[0].request_id == drills[0].drilled
    refusal = drilled[0].rejections[0]
    assert refusal.code is ErrorCode.MALFORMED_ACTION
    assert refusal.message == drill_message(drilled[0].request_id)
    first = [r.request_id for r in bot.requests].index(drilled[0].request_id)
    assert refusal.raw == action_to_proto(bot.answers[first]).SerializeToString()  # as sent
    assert drilled[0].source is DecisionSource.BOT  # the bot's retry was taken
    assert [n.message for n in seats[1].rejections] == [refusal.message]


def test_arena_local_seats_play_in_process_and_their_tokens_open_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        arena = Arena(tmp_path)
        settings = replace(SETTINGS, opening=tuple(opening_of(SETTINGS, 10)))
        hosted = arena.create(settings, local={0: random_policy(1), 1: random_policy(2)})
        assert [x.connected for x in summary(hosted).seats] == [
            True,
            True,
        ]  # local seats are always in
        assert hosted.task is not None
        outcome = await hosted.task
        assert outcome.complete
        assert [arena.find_seat(token) for token in hosted.tokens] == [None, None]
        report = verify_record(read_record(hosted.record_path))
        assert report.ok and report.complete, report.summary()

    run(main())


def test_arena_refuses_bad_local_seats_without_leaving_a_record(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        arena = Arena(tmp_path)
        with pytest.raises(ValueError, match=r"local seats \[2\] for a 2-player match"):
            arena.create(SETTINGS, local={2: random_policy(1)})
        assert list(tmp_path.iterdir()) == []
        assert arena.matches == {}

    run(main())
