"""Misbehaving seats: timeouts and strikes, illegal and malformed replies, stale replies."""

from __future__ import annotations

import re

import pytest
from medina.engine import EventKind, new_game
from medina.engine.turn import explain
from medina.referee.config import TimeControl, TimeoutPolicy
from medina.referee.outcome import MatchOutcome, Termination
from medina.referee.record import DecisionSource, ErrorCode, IncidentKind, Rejection

from .fakes import (
    ILLEGAL,
    MALFORMED_RAW,
    FakeSeat,
    Illegal,
    Late,
    LogSink,
    Noisy,
    Skip,
    Stall,
    check_record,
    decision_keys,
    make_settings,
    play_sync,
)

B, T, F = DecisionSource.BOT, DecisionSource.TIMEOUT, DecisionSource.FALLBACK


def others_unaffected(outcome: MatchOutcome, sink: LogSink, bad: int) -> None:
    for s in outcome.seats:
        if s.seat != bad:
            assert (s.termination, s.strikes) == (Termination.NORMAL, 0)
            assert set(sink.sources(s.seat)) == {B}
            assert sink.kinds(s.seat) == [IncidentKind.CONNECTED]


# -- timeouts --------------------------------------------------------------------------


def test_a_timeout_strikes_and_the_referee_plays_a_legal_random_action() -> None:
    settings = make_settings("medina-v2", 3)
    seats = [Skip(0, {2}), FakeSeat(1), FakeSeat(2)]
    outcome, sink, _ = play_sync(settings, seats)

    check_record(settings, sink, outcome)  # the random action was legal
    sources = sink.sources(0)
    assert sources[:3] == [B, T, B] and set(sources[3:]) == {B}
    timed_out = [d for d in sink.decisions if d.source is T]
    assert len(timed_out) == 1
    assert timed_out[0].request_id == seats[0].requests[1].request_id
    assert timed_out[0].time_ms >= settings.time.decision_ms + settings.time.grace_ms
    assert outcome.seats[0].termination is Termination.NORMAL
    assert outcome.seats[0].strikes == 1
    assert sink.kinds(0) == [IncidentKind.CONNECTED, IncidentKind.TIMEOUT]
    [strike] = [i for i in sink.incidents if i.kind is IncidentKind.TIMEOUT]
    assert "strike 1" in strike.detail and strike.at_decision == timed_out[0].index
    assert [r.clock.strikes for r in seats[0].requests[:3]] == [0, 0, 1]
    assert seats[0].closed == [r.request_id for r in seats[0].requests]
    others_unaffected(outcome, sink, 0)


@pytest.mark.parametrize("players", [3, 4])
def test_max_strikes_forfeits_and_the_fallback_plays_on(players: int) -> None:
    settings = make_settings("medina-v2", players, max_strikes=3)
    bad = 1
    seats: list[FakeSeat] = [FakeSeat(seat) for seat in range(players)]
    seats[bad] = Stall(bad, answer=1)
    outcome, sink, match = play_sync(settings, seats)

    assert outcome.complete
    check_record(settings, sink, outcome)
    sources = sink.sources(bad)
    assert sources[:4] == [B, T, T, F] and set(sources[4:]) == {F}
    assert len(seats[bad].requests) == 4, "no request after the forfeit"
    assert [d.request_id for d in sink.decisions if d.seat == bad][4:] == [0] * (len(sources) - 4)
    result = outcome.seats[bad]
    assert (result.termination, result.strikes, result.rank) == (Termination.TIMEOUT, 3, players)
    assert "3 strike(s)" in result.detail
    assert sink.kinds(bad) == [IncidentKind.CONNECTED] + [IncidentKind.TIMEOUT] * 3 + [
        IncidentKind.FORFEIT
    ]
    assert sink.incidents[-1].termination is Termination.TIMEOUT
    assert match.is_forfeited(bad) and not match.is_forfeited(0)
    others_unaffected(outcome, sink, bad)
    assert sorted(s.rank for s in outcome.seats if s.seat != bad)[0] == 1
    assert len(seats[bad].ends) == 1 and seats[bad].updates, "a forfeited seat still hears"


@pytest.mark.parametrize("ruleset", ["medina-v2", "medina-v1-2p"])
def test_two_player_forfeit_makes_the_opponent_first(ruleset: str) -> None:
    settings = make_settings(ruleset, 2, max_strikes=1)
    outcome, sink, _ = play_sync(settings, [FakeSeat(0), Stall(1)])
    assert [s.rank for s in outcome.seats] == [1, 2]
    assert [s.termination for s in outcome.seats] == [Termination.NORMAL, Termination.TIMEOUT]
    assert set(sink.sources(1)) == {F}
    check_record(settings, sink, outcome)


def test_forfeit_policy_forfeits_on_the_first_timeout() -> None:
    settings = make_settings("medina-v2", 3, on_timeout=TimeoutPolicy.FORFEIT, max_strikes=3)
    seats = [FakeSeat(0), FakeSeat(1), Skip(2, {2})]
    outcome, sink, _ = play_sync(settings, seats)
    assert sink.sources(2)[:2] == [B, F] and set(sink.sources(2)[2:]) == {F}
    assert (outcome.seats[2].termination, outcome.seats[2].strikes) == (Termination.TIMEOUT, 1)
    assert outcome.seats[2].rank == 3
    assert sink.kinds(2) == [IncidentKind.CONNECTED, IncidentKind.TIMEOUT, IncidentKind.FORFEIT]
    others_unaffected(outcome, sink, 2)
    # Not told of its forfeit, the seat is asked nothing more but still follows the game to
    # its end and gets the result (docs/bot-authors.md, "To the end of the stream").
    assert len(seats[2].requests) == 2
    assert seats[2].updates[-1][1][-1].kind is EventKind.GAME_OVER
    assert [end.outcome for end in seats[2].ends] == [outcome]


def test_a_reply_after_the_grace_is_a_timeout_and_is_then_ignored() -> None:
    settings = make_settings("medina-v2", 2, max_strikes=2)
    seats = [FakeSeat(0), Late(1)]
    outcome, sink, _ = play_sync(settings, seats)
    assert sink.sources(1)[:2] == [T, F]
    assert outcome.seats[1].termination is Termination.TIMEOUT
    assert seats[1].rejections == []
    check_record(settings, sink, outcome)


def test_a_reply_within_the_grace_is_accepted_and_charged() -> None:
    time = TimeControl(
        decision_ms=30, bank_ms=10_000, increment_ms=0, first_decision_extra_ms=0, grace_ms=5_000
    )
    settings = make_settings("medina-v2", 2, time=time)
    seats = [FakeSeat(0), Late(1, delay_s=0.06, count=3)]
    _, sink, match = play_sync(settings, seats)
    late = [d for d in sink.decisions if d.seat == 1][:3]
    assert [d.source for d in late] == [B] * 3
    assert all(d.time_ms >= 60 for d in late)
    assert [s.strikes for s in match.view().seats] == [0, 0]
    # the second request is told the previous reply's measured time and the smaller bank
    clock = seats[1].requests[1].clock
    assert clock.last_reply_ms == late[0].time_ms
    assert clock.bank_ms == 10_000 - late[0].time_ms
    assert clock.time_left_ms <= 30


def test_a_timeout_is_charged_to_the_bank() -> None:
    time = TimeControl(
        decision_ms=30, bank_ms=30, increment_ms=0, first_decision_extra_ms=0, grace_ms=10
    )
    settings = make_settings("medina-v2", 2, time=time, max_strikes=1)
    seats = [FakeSeat(0), Skip(1, {1})]
    outcome, _, match = play_sync(settings, seats)
    assert outcome.seats[1].termination is Termination.TIMEOUT
    assert match.view().seats[1].bank_ms == 0


# -- illegal and malformed replies ------------------------------------------------------


def test_illegal_replies_are_explained_and_the_seat_may_recover() -> None:
    settings = make_settings("medina-v2", 2, max_rejections=3)
    seats = [Illegal(0, 2), FakeSeat(1)]
    outcome, sink, _ = play_sync(settings, seats)

    why = explain(new_game("medina-v2", 2, settings.seed), ILLEGAL)
    assert why.rule == "wall-space"
    notices = seats[0].rejections
    rid = seats[0].requests[0].request_id
    assert [n.request_id for n in notices] == [rid, rid]
    assert [n.rejections_left for n in notices] == [2, 1]
    for n in notices:
        assert (n.code, n.rule, n.message) == (ErrorCode.ILLEGAL_ACTION, why.rule, why.message)
        assert re.search(r"\b[A-Z]\d{1,2}\b", n.message), "squares are named in A1 notation"
        assert n.clock.strikes == 0 and n.clock.time_left_ms <= settings.time.decision_ms
    first = sink.decisions[0]
    assert (first.seat, first.source, first.request_id) == (0, B, rid)
    refused = Rejection(ILLEGAL, ErrorCode.ILLEGAL_ACTION, why.rule, why.message)
    assert first.rejections == (refused, refused)
    assert first.action == seats[0].requests[0].legal.nth(0)
    assert (outcome.seats[0].termination, outcome.seats[0].strikes) == (Termination.NORMAL, 0)
    assert seats[0].closed[0] == rid
    others_unaffected(outcome, sink, 0)


def test_too_many_illegal_replies_count_as_a_timeout() -> None:
    settings = make_settings("medina-v2", 2, max_rejections=3, max_strikes=3)
    seats = [Illegal(0, 4, on=2), FakeSeat(1)]
    outcome, sink, _ = play_sync(settings, seats)

    assert [n.rejections_left for n in seats[0].rejections] == [2, 1, 0]
    mine = [d for d in sink.decisions if d.seat == 0]
    assert [d.source for d in mine[:3]] == [B, T, B]
    assert len(mine[1].rejections) == 4 and mine[1].action != ILLEGAL
    assert mine[1].request_id in seats[0].closed
    assert (outcome.seats[0].termination, outcome.seats[0].strikes) == (Termination.NORMAL, 1)
    strike = [i for i in sink.incidents if i.kind is IncidentKind.TIMEOUT]
    assert len(strike) == 1 and "illegal" in strike[0].detail
    check_record(settings, sink, outcome)


@pytest.mark.parametrize(
    ("policy", "max_strikes"), [(TimeoutPolicy.RANDOM_ACTION, 1), (TimeoutPolicy.FORFEIT, 3)]
)
def test_forfeit_for_illegal_replies_says_so(policy: TimeoutPolicy, max_strikes: int) -> None:
    settings = make_settings(
        "medina-v2", 3, on_timeout=policy, max_strikes=max_strikes, max_rejections=1
    )
    seats = [FakeSeat(0), Illegal(1, 2), FakeSeat(2)]
    outcome, sink, _ = play_sync(settings, seats)
    assert [n.rejections_left for n in seats[1].rejections] == [0]
    result = outcome.seats[1]
    assert (result.termination, result.rank) == (Termination.ILLEGAL_ACTION, 3)
    assert "illegal" in result.detail
    assert set(sink.sources(1)) == {F}
    forfeit = [i for i in sink.incidents if i.kind is IncidentKind.FORFEIT]
    assert [(i.seat, i.termination) for i in forfeit] == [(1, Termination.ILLEGAL_ACTION)]
    others_unaffected(outcome, sink, 1)


def test_no_retries_when_max_rejections_is_zero() -> None:
    settings = make_settings("medina-v2", 2, max_rejections=0)
    seats = [Illegal(0, 1), FakeSeat(1)]
    outcome, sink, _ = play_sync(settings, seats)
    assert seats[0].rejections == []
    assert sink.decisions[0].source is T and len(sink.decisions[0].rejections) == 1
    assert outcome.seats[0].strikes == 1


def test_malformed_replies_are_rejected_as_such() -> None:
    settings = make_settings("medina-v1", 3)
    seats = [Illegal(0, 1, action=None), FakeSeat(1), FakeSeat(2)]
    outcome, sink, _ = play_sync(settings, seats)
    [notice] = seats[0].rejections
    assert (notice.code, notice.rule, notice.message) == (
        ErrorCode.MALFORMED_ACTION,
        "malformed",
        "could not decode action",
    )
    assert notice.rejections_left == settings.policies.max_rejections - 1
    first = sink.decisions[0]
    assert first.source is B
    assert first.rejections == (
        Rejection(
            None, ErrorCode.MALFORMED_ACTION, "malformed", "could not decode action", MALFORMED_RAW
        ),
    )  # the action as the bot sent it is kept for the record
    assert outcome.seats[0].termination is Termination.NORMAL
    check_record(settings, sink, outcome)


def test_the_rule_code_follows_the_position() -> None:
    # the start-merchant opening of the first edition has its own rule
    settings = make_settings("medina-v1", 3)
    seats = [Illegal(0, 1), FakeSeat(1), FakeSeat(2)]
    play_sync(settings, seats)
    why = explain(new_game("medina-v1", 3, settings.seed), ILLEGAL)
    assert seats[0].rejections[0].rule == why.rule == "start-merchant"


# -- replies the referee must ignore -----------------------------------------------------


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 2), ("medina-v1", 4)])
def test_stale_unknown_and_foreign_replies_change_nothing(ruleset: str, players: int) -> None:
    settings = make_settings(ruleset, players)
    baseline = play_sync(settings, [FakeSeat(seat) for seat in range(players)])
    noisy = [Noisy(seat, players) for seat in range(players)]
    outcome, sink, match = play_sync(settings, noisy)

    assert decision_keys(sink.decisions) == decision_keys(baseline[1].decisions)
    assert sink.incidents == baseline[1].incidents
    assert outcome.seats == baseline[0].seats
    assert all(seat.rejections == [] for seat in noisy)
    assert [s.strikes for s in match.view().seats] == [0] * players
