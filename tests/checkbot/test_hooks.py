"""The referee and arena hooks check-bot uses: a scripted opening, a drill judge, local seats."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from medina.engine import Action, ActionKind, IllegalActionError, apply_action, new_game
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings, TimeControl
from medina.referee.local import LocalSeat, random_policy
from medina.referee.match import Match
from medina.referee.record import DecisionSource, ErrorCode, MemorySink, Rejection
from medina.referee.seat import DecisionRequest, RejectionNotice, Signal
from medina.rpc.admin_servicer import summary
from medina.rpc.host import Arena
from medina_client.strategies import random_action

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
    """A local seat's policy that keeps every request it was sent."""

    def __init__(self, seed: int) -> None:
        self.requests: list[DecisionRequest] = []
        self.policy = random_policy(seed)

    def __call__(self, state: Any, request: DecisionRequest) -> Action:
        self.requests.append(request)
        return self.policy(state, request)


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


def local_match(settings: MatchSettings, policies: list[Any], **hooks: Any) -> Match:
    holder: list[Match] = []

    def submit(signal: Signal) -> None:
        holder[0].submit(signal)

    seats = [RetryingSeat(seat, p, submit) for seat, p in enumerate(policies)]
    match = Match("m", settings, seats, MemorySink(), connected=[True] * len(seats), **hooks)
    holder.append(match)
    for seat in seats:
        seat.state = lambda: match.state
    return match


def test_the_opening_is_played_and_recorded_before_the_seats_are_asked() -> None:
    opening = opening_of(SETTINGS, 40)
    recorders = [Recorder(1), Recorder(2)]
    match = local_match(SETTINGS, recorders, opening=opening)
    assert match.state.decisions == 0  # played once the seats are in, after the header
    outcome = run(match.run())
    assert outcome.complete
    sink = match.sink
    assert isinstance(sink, MemorySink)
    scripted = sink.decisions[:40]
    assert [d.action for d in scripted] == opening
    assert [d.index for d in scripted] == list(range(40))
    assert {(d.source, d.request_id) for d in scripted} == {(DecisionSource.FALLBACK, 0)}
    assert {d.source for d in sink.decisions[40:]} == {DecisionSource.BOT}
    expected = new_game("medina-v2", 2, 5)
    for action in opening:
        expected = apply_action(expected, action)
    first = next(r for seat in recorders for r in seat.requests if r.request_id == 1)
    assert first.seat == expected.to_move
    assert first.observation.first_event == 0  # the first request carries the whole history
    assert len(first.observation.events) == expected.n_events


def test_an_illegal_opening_is_refused_when_the_match_is_made() -> None:
    opening = [*opening_of(SETTINGS, 3), Action(ActionKind.WALL, 0)]  # A1 is a tower
    with pytest.raises(IllegalActionError, match="A1"):
        local_match(SETTINGS, [Recorder(1), Recorder(2)], opening=opening)


def test_the_judge_refuses_a_legal_reply_once_and_the_seat_answers_again() -> None:
    judged: list[tuple[int, int, Action]] = []

    def judge(seat: int, rid: int, action: Action) -> Rejection | None:
        judged.append((seat, rid, action))
        if rid == 3 and len([j for j in judged if j[1] == 3]) == 1:
            return Rejection(action, ErrorCode.ILLEGAL_ACTION, "drill", "a drill")
        return None

    match = local_match(SETTINGS, [Recorder(1), Recorder(2)], judge=judge)
    outcome = run(match.run())
    assert outcome.complete
    sink = match.sink
    assert isinstance(sink, MemorySink)
    drilled = [d for d in sink.decisions if d.rejections]
    assert len(drilled) == 1 and drilled[0].request_id == 3
    assert drilled[0].rejections[0].rule == "drill"
    assert drilled[0].source is DecisionSource.BOT
    seat = match.seats[drilled[0].seat]
    assert isinstance(seat, LocalSeat)
    assert [(n.request_id, n.rule, n.message) for n in seat.rejections] == [(3, "drill", "a drill")]
    assert [rid for _s, rid, _a in judged].count(3) == 2


def test_the_judge_never_sees_an_illegal_reply() -> None:
    judged: list[int] = []

    def judge(seat: int, rid: int, action: Action) -> Rejection | None:
        judged.append(rid)
        return None

    calls = {"n": 0}
    policy = random_policy(1)

    def clumsy(state: Any, request: DecisionRequest) -> Action:
        calls["n"] += 1
        return Action(ActionKind.WALL, 0) if calls["n"] == 1 else policy(state, request)

    match = local_match(SETTINGS, [clumsy, Recorder(2)], judge=judge)
    run(match.run())
    sink = match.sink
    assert isinstance(sink, MemorySink)
    first = sink.decisions[0]
    assert len(first.rejections) == 1 and first.rejections[0].code is ErrorCode.ILLEGAL_ACTION
    assert judged.count(first.request_id) == 1  # only the legal retry was judged


def test_arena_local_seats_play_in_process_and_their_tokens_open_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        arena = Arena(tmp_path)
        opening = opening_of(SETTINGS, 10)
        hosted = arena.create(
            SETTINGS, opening=opening, local={0: random_policy(1), 1: random_policy(2)}
        )
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


def test_arena_refuses_bad_local_seats_and_bad_openings_without_leaving_a_record(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        arena = Arena(tmp_path)
        with pytest.raises(ValueError, match=r"local seats \[2\] for a 2-player match"):
            arena.create(SETTINGS, local={2: random_policy(1)})
        with pytest.raises(IllegalActionError):
            arena.create(SETTINGS, opening=[Action(ActionKind.WALL, 0)])
        assert list(tmp_path.iterdir()) == []
        assert arena.matches == {}

    run(main())
