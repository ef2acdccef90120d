"""The match loop with well-behaved scripted seats: requests, updates, records, spectators and
determinism (misbehaviour: test_match_policies.py; connections: test_match_connections.py)."""

from __future__ import annotations

import pytest
from medina.engine import Event, EventKind, GameState, apply_action, legal_moves, new_game
from medina.engine.variants import CONFIGURATIONS
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy
from medina.referee.match import Match, MatchPhase
from medina.referee.outcome import Termination
from medina.referee.record import DecisionSource, Header, IncidentKind

from .fakes import (
    FakeSeat,
    Hook,
    Illegal,
    LogSink,
    Noisy,
    Skip,
    Spectator,
    check_record,
    decision_keys,
    make_match,
    make_settings,
    play,
    play_sync,
    run,
)

SUPPORTED = list(CONFIGURATIONS)


def seats_for(settings: MatchSettings) -> list[FakeSeat]:
    return [FakeSeat(seat) for seat in range(settings.players)]


def seen_events(seat: FakeSeat) -> dict[int, Event]:
    """Every history entry the seat was told, by index (requests and updates)."""
    seen: dict[int, Event] = {}
    batches = [(r.observation.first_event, list(r.observation.events)) for r in seat.requests]
    for first, events in batches + seat.updates:
        for i, event in enumerate(events):
            assert seen.setdefault(first + i, event) == event, "one index, two events"
    return seen


@pytest.mark.parametrize(("ruleset", "players"), SUPPORTED)
def test_scripted_seats_play_a_full_match(ruleset: str, players: int) -> None:
    settings = make_settings(ruleset, players)
    seats = seats_for(settings)
    outcome, sink, match = play_sync(settings, seats)

    assert outcome.complete and match.phase is MatchPhase.FINISHED
    assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * players
    final = check_record(settings, sink, outcome)
    assert {d.source for d in sink.decisions} == {DecisionSource.BOT}
    rids = [d.request_id for d in sink.decisions]
    assert rids == sorted(set(rids)), "one fresh request id per decision"
    for seat in seats:
        asked = [r.request_id for r in seat.requests]
        assert asked == [d.request_id for d in sink.decisions if d.seat == seat.seat]
        assert seat.closed == asked, "every request is settled once, in order"
        assert seat.rejections == []
        assert len(seat.ends) == 1 and seat.ends[0].outcome == outcome
        assert set(seen_events(seat)) == set(range(final.n_events))
        assert all(seen_events(seat)[i] == e for i, e in enumerate(final.events))


def test_requests_show_the_seat_its_own_view_and_clock() -> None:
    settings = make_settings("medina-v2", 3)
    seats = seats_for(settings)
    play_sync(settings, seats)
    allowed = settings.time.decision_ms
    for seat in seats:
        for request in seat.requests:
            obs = request.observation
            assert obs.viewer == seat.seat and obs.to_move == seat.seat
            for view in obs.seats:
                assert (view.supply is not None) == (view.seat == seat.seat or view.revealed)
            assert 0 <= request.clock.time_left_ms <= allowed
            assert request.clock.strikes == 0
            assert request.clock.bank_ms == 0  # no-bank mode
        first_events = [r.observation.first_event for r in seat.requests]
        assert first_events[0] == 0, "the first request carries the whole history"
        # then the events since the seat's previous request
        for previous, request in zip(seat.requests, seat.requests[1:], strict=False):
            assert request.observation.first_event == previous.observation.first_event + len(
                previous.observation.events
            )


def test_legal_moves_in_the_request_are_the_engine_s() -> None:
    settings = make_settings("medina-v1", 3)
    seats = seats_for(settings)
    _, sink, _ = play_sync(settings, seats)
    s = new_game(settings.ruleset, settings.players, settings.seed)
    requests = sorted((r for seat in seats for r in seat.requests), key=lambda r: r.request_id)
    for request, decision in zip(requests, sink.decisions, strict=True):
        assert request.legal == legal_moves(s)
        s = apply_action(s, decision.action)


def test_seat_count_must_match_the_settings() -> None:
    settings = make_settings("medina-v2", 3)
    with pytest.raises(ValueError, match="2 seats given for a 3-player match"):
        Match("m", settings, [FakeSeat(0), FakeSeat(1)], LogSink())


def test_header_names_the_seats_and_the_setup() -> None:
    settings = MatchSettings(
        "medina-v2",
        2,
        seed=3,
        start_seat=1,
        time=make_settings().time,
        seat_names=("alice", "bob"),
    )
    outcome, sink, _ = play_sync(settings, [FakeSeat(0), FakeSeat(1)])
    header = sink.entries[0]
    assert isinstance(header, Header)
    s = new_game("medina-v2", 2, 3, start_seat=1)
    assert header.well == s.well and header.start_merchant >= 0
    assert [x.name for x in header.seats] == ["alice", "bob"]
    assert header.started_at.endswith("Z")
    assert sink.decisions[0].seat == 1
    assert [x.name for x in outcome.seats] == ["alice", "bob"]


# -- spectators --------------------------------------------------------------------------


def check_spectator(spectator: Spectator, start: int, final: GameState) -> None:
    """Every public event after ``start`` exactly once, in order, then the outcome."""
    cursor = start
    for first, events in spectator.batches:
        assert first == cursor and events
        cursor += len(events)
    got = [e for _, events in spectator.batches for e in events]
    assert got == final.events[start:]
    for event in got:
        assert event.supply is None or event.kind is EventKind.SUPPLY_REVEALED


@pytest.mark.parametrize(("ruleset", "players"), SUPPORTED)
def test_spectator_sees_every_public_event_once_and_the_outcome(ruleset: str, players: int) -> None:
    settings = make_settings(ruleset, players)

    async def main() -> None:
        sink = LogSink()
        match = make_match(settings, seats_for(settings), sink)
        spectator = Spectator()
        start, done = match.watch(spectator)
        assert (start, done) == (match.state.n_events, None)
        outcome = await match.run()
        check_spectator(spectator, start, match.state)
        assert spectator.ends == [outcome]
        assert match.watch(Spectator()) == (match.state.n_events, outcome)

    run(main())


def test_supply_reaches_spectators_only_when_revealed() -> None:
    settings = make_settings("medina-v1-2p", 2, seed=4)
    match = local_match("m", settings, [random_policy(4), random_policy(5)], LogSink())
    spectator = Spectator()
    start, _ = match.watch(spectator)
    run(match.run())
    check_spectator(spectator, start, match.state)
    got = [e for _, events in spectator.batches for e in events]
    revealed = [e for e in got if e.kind is EventKind.SUPPLY_REVEALED]
    assert len(revealed) == 2, "seed 4 reveals both supplies: pick another if the rules change"
    assert all(e.supply is not None for e in revealed)


def test_spectator_joining_mid_match_and_leaving() -> None:
    settings = make_settings("medina-v2", 3)
    late = Spectator()
    starts: list[int] = []

    def join() -> None:
        start, done = match.watch(late)
        assert done is None
        starts.append(start)
        seats[0].reply(seats[0].requests[-1].request_id, seats[0].requests[-1].legal.nth(0))

    seats: list[FakeSeat] = [Hook(0, 3, join), FakeSeat(1), FakeSeat(2)]
    sink = LogSink()
    match = make_match(settings, seats, sink)

    async def main() -> None:
        outcome = await match.run()
        assert late.ends == [outcome]

    run(main())
    check_spectator(late, starts[0], match.state)
    assert 0 < starts[0] < match.state.n_events


def test_unwatched_spectator_hears_nothing_more() -> None:
    settings = make_settings("medina-v2", 2)
    spectator = Spectator()

    def leave() -> None:
        match.unwatch(spectator)
        seats[1].reply(seats[1].requests[-1].request_id, seats[1].requests[-1].legal.nth(0))

    seats: list[FakeSeat] = [FakeSeat(0), Hook(1, 2, leave)]
    match = make_match(settings, seats, LogSink())
    start, _ = match.watch(spectator)
    run(match.run())
    assert spectator.ends == []
    heard = sum(len(events) for _, events in spectator.batches)
    assert 0 < heard < match.state.n_events - start
    match.unwatch(spectator)  # unwatching twice is harmless


# -- determinism -------------------------------------------------------------------------


def scripted(players: int) -> list[FakeSeat]:
    seats: list[FakeSeat] = [Illegal(0, 2, on=2), Noisy(1, players), Skip(2, {3})]
    return seats + [FakeSeat(seat) for seat in range(3, players)]


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 4), ("medina-v1", 3)])
def test_same_settings_and_scripts_give_the_same_match(ruleset: str, players: int) -> None:
    settings = make_settings(ruleset, players, seed=21)
    first = run(play(settings, scripted(players)))
    second = run(play(settings, scripted(players)))
    assert decision_keys(first[1].decisions) == decision_keys(second[1].decisions)
    assert first[1].incidents == second[1].incidents
    assert first[0].seats == second[0].seats
    sources = {d.source for d in first[1].decisions}
    assert DecisionSource.TIMEOUT in sources  # the referee's own choices repeat too
    assert [i.kind for i in first[1].incidents if i.seat == 2] == [
        IncidentKind.CONNECTED,
        IncidentKind.TIMEOUT,
    ]


def test_different_seeds_give_different_matches() -> None:
    a = play_sync(make_settings(seed=1), [FakeSeat(0), FakeSeat(1)])
    b = play_sync(make_settings(seed=2), [FakeSeat(0), FakeSeat(1)])
    assert decision_keys(a[1].decisions) != decision_keys(b[1].decisions)
