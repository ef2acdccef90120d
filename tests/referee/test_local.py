"""In-process seats: full matches of every ruleset, records that replay, the built-in policies."""

from __future__ import annotations

import asyncio

import pytest
from medina.engine import GameState, apply_action, is_legal, legal_moves, new_game, observe, result
from medina.engine.variants import CONFIGURATIONS
from medina.referee.config import MatchSettings
from medina.referee.local import (
    LocalSeat,
    local_match,
    policy,
    random_policy,
)
from medina.referee.match import MatchPhase
from medina.referee.outcome import MatchOutcome, Termination
from medina.referee.record import DecisionSource, Header, Incident, IncidentKind, MemorySink
from medina.referee.seat import ClockView, DecisionRequest, ReplySignal, Signal
from medina.strategies import POLICIES as STRATEGIES

from .fakes import LogSink, check_record, decision_keys, run

SUPPORTED = list(CONFIGURATIONS)


async def play_local(settings: MatchSettings, sink: LogSink) -> MatchOutcome:
    policies = [random_policy(100 + seat) for seat in range(settings.players)]
    return await local_match("local", settings, policies, sink).run()


@pytest.mark.parametrize(("ruleset", "players"), SUPPORTED)
@pytest.mark.parametrize("seed", [1, 2])
def test_full_local_match_finishes_normally_and_replays(
    ruleset: str, players: int, seed: int
) -> None:
    settings = MatchSettings(ruleset, players, seed=seed, start_seat=seed % players)
    sink = LogSink()
    outcome = run(play_local(settings, sink))

    assert outcome.complete
    assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * players
    assert [s.strikes for s in outcome.seats] == [0] * players
    header = sink.entries[0]
    assert isinstance(header, Header)
    assert header.settings == settings and header.match_id == "local"
    assert [s.seat for s in header.seats] == list(range(players))
    final = check_record(settings, sink, outcome)
    assert len(sink.decisions) == final.decisions
    assert [d.index for d in sink.decisions] == list(range(final.decisions))
    assert {d.source for d in sink.decisions} == {DecisionSource.BOT}
    assert all(d.rejections == () for d in sink.decisions)
    # connected from the start: the record says so, and nothing else happens
    assert [(i.kind, i.seat, i.at_decision) for i in sink.incidents] == [
        (IncidentKind.CONNECTED, seat, 0) for seat in range(players)
    ]
    assert all(isinstance(e, Incident) for e in sink.entries[1 : players + 1])
    res = result(final)
    assert tuple(s.rank for s in outcome.seats) == res.ranks
    assert tuple(s.breakdown for s in outcome.seats) == res.breakdowns


def test_match_state_after_a_local_match() -> None:
    settings = MatchSettings("medina-v2", 3, seed=5)

    async def main() -> None:
        match = local_match("m", settings, [random_policy(i) for i in range(3)], MemorySink())
        assert match.phase.name == "WAITING"  # (keeps mypy from narrowing the phase)
        outcome = await match.run()
        assert match.phase is MatchPhase.FINISHED
        assert match.outcome is outcome
        assert match.state.over
        await asyncio.wait_for(match.wait_done(), 1)
        for seat in match.seats:
            assert isinstance(seat, LocalSeat)
            assert seat.rejections == []
            assert seat.ended is not None and seat.ended.outcome is outcome
            assert seat.events_seen == match.state.n_events
            final = seat.ended.observation
            assert final.viewer == seat.seat  # its own view: other supplies stay hidden
            assert [v.supply is not None for v in final.seats] == [i == seat.seat for i in range(3)]
            assert final.events == ()  # every event came in an update before the end

    run(main())


def test_memory_sink_keeps_one_entry_per_decision() -> None:
    settings = MatchSettings("medina-v1-2p", 2, seed=3)
    sink = MemorySink()
    outcome = run(local_match("m", settings, [random_policy(1), random_policy(2)], sink).run())
    assert len(sink.headers) == 1 and sink.outcomes == [outcome]
    s = new_game(settings.ruleset, settings.players, settings.seed)
    for d in sink.decisions:
        s = apply_action(s, d.action)
    assert s.over
    assert len(sink.decisions) == s.decisions
    assert [i.kind for i in sink.incidents] == [IncidentKind.CONNECTED] * 2


def test_a_strategy_policy_plays_a_full_match() -> None:
    settings = MatchSettings("medina-v2", 2, seed=9)
    sink = LogSink()
    greedy = policy(STRATEGIES["greedy"], 1)
    outcome = run(local_match("g", settings, [greedy, random_policy(2)], sink).run())
    assert outcome.complete
    check_record(settings, sink, outcome)


def test_local_matches_are_deterministic() -> None:
    settings = MatchSettings("medina-v1", 3, seed=11)
    first, second = LogSink(), LogSink()
    a = run(play_local(settings, first))
    b = run(play_local(settings, second))
    assert decision_keys(first.decisions) == decision_keys(second.decisions)
    assert a.seats == b.seats


def request_for(s: GameState) -> DecisionRequest:
    return DecisionRequest(
        1, s.to_move, observe(s, s.to_move), legal_moves(s), ClockView(0, 0, 0, 0)
    )


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_policies_choose_legal_actions(name: str) -> None:
    chooser = policy(STRATEGIES[name], 0)
    s = new_game("medina-v2", 2, 1)
    for _ in range(8):
        action = chooser(s, request_for(s))
        assert is_legal(s, action)
        s = apply_action(s, action)


def test_local_seat_replies_at_once_to_its_request() -> None:
    s = new_game("medina-v2", 2, 1)
    got: list[Signal] = []
    seat = LocalSeat(0, random_policy(0), got.append)
    seat.state = lambda: s
    seat.request(request_for(s))
    assert len(got) == 1
    reply = got[0]
    assert isinstance(reply, ReplySignal)
    assert (reply.seat, reply.request_id, reply.error) == (0, 1, "")
    assert reply.action is not None and is_legal(s, reply.action)


def test_local_match_seat_count_must_match_the_settings() -> None:
    settings = MatchSettings("medina-v2", 3, seed=1)
    with pytest.raises(ValueError, match="2 seats given for a 3-player match"):
        local_match("m", settings, [random_policy(0), random_policy(1)], MemorySink())
