"""``medina-arena match``'s progress lines, fed a spectator stream as the server sends it:
a snapshot (the history so far, from entry 0), then one update per decision."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from medina.cli.match_cmd import Spectator
from medina.engine import EventKind, GameState, apply_action, legal_moves, new_game, observe
from medina.v1 import admin_pb2, game_pb2
from medina.wire import convert

TURN = re.compile(r"^(turn +\d+|start) +seat (\d): (.*?) +score")


def played(ruleset: str, players: int, seed: int, start_seat: int) -> list[GameState]:
    """Every state of a seeded random game, from its setup to its end."""
    rng = random.Random(seed)
    states = [new_game(ruleset, players, seed, start_seat=start_seat)]
    while not states[-1].over:
        legal = legal_moves(states[-1])
        states.append(apply_action(states[-1], legal.nth(rng.randrange(len(legal)))))
    return states


def stream(states: list[GameState]) -> list[admin_pb2.WatchResponse]:
    """The spectator stream of a match watched from its start."""
    snapshot = convert.observation_to_proto(observe(states[0], None))
    out = [admin_pb2.WatchResponse(snapshot=snapshot)]
    for before, after in itertools.pairwise(states):
        events = convert.events_to_proto(before.n_events, after.events_since(before.n_events))
        out.append(admin_pb2.WatchResponse(update=game_pb2.Update(events=events)))
    return out


def lines_of(
    states: list[GameState], capsys: pytest.CaptureFixture[str]
) -> list[tuple[str, int, str]]:
    view = Spectator(states[0])
    for message in stream(states):
        view.message(message)
    view.progress.flush()
    assert view.game.state.n_events == states[-1].n_events
    out = capsys.readouterr().out.splitlines()
    found = [TURN.match(line) for line in out if "passes" not in line]
    assert all(found), out
    return [(m.group(1), int(m.group(2)), m.group(3)) for m in found if m]


def decisions(state: GameState) -> list[int]:
    """The seat of every placement and tea break of a game, in order."""
    kinds = (EventKind.PLACED, EventKind.TEA_SPENT)
    return [e.seat for e in state.events_since(0) if e.kind in kinds]


@pytest.mark.parametrize(("players", "seed", "start"), [(2, 3, 0), (4, 1, 2)])
def test_v2_the_start_seats_first_turn_is_shown(
    players: int, seed: int, start: int, capsys: pytest.CaptureFixture[str]
) -> None:
    states = played("medina-v2", players, seed, start)
    lines = lines_of(states, capsys)
    # The first turn, begun at setup (its TurnStarted is in the snapshot), has 1 placement.
    assert lines[0][:2] == ("turn   1", start) and ", " not in lines[0][2]
    assert lines[1][:2] == ("turn   2", (start + 1) % players)
    shown = [seat for _, seat, parts in lines for _ in parts.split(", ")]
    assert shown == decisions(states[-1])  # every decision, once, by its seat


def test_v1_the_start_merchant_is_its_own_line_before_the_first_turn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    states = played("medina-v1", 3, 5, 1)
    lines = lines_of(states, capsys)
    assert lines[0][:2] == ("start", 1) and re.fullmatch(r"start merchant [A-P]\d+", lines[0][2])
    assert lines[1][:2] == ("turn   1", 1) and ", " in lines[1][2]  # two placements
    shown = [seat for _, seat, parts in lines for _ in parts.split(", ")]
    assert shown == decisions(states[-1])


def test_v1_two_players_the_start_merchant_is_the_whole_first_turn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    states = played("medina-v1-2p", 2, 2, 0)
    lines = lines_of(states, capsys)
    assert lines[0][:2] == ("turn   1", 0) and lines[0][2].startswith("start merchant ")
    assert lines[1][:2] == ("turn   2", 1)
    shown = [seat for _, seat, parts in lines for _ in parts.split(", ")]
    assert shown == decisions(states[-1])


def test_entries_already_shown_are_not_shown_again(capsys: pytest.CaptureFixture[str]) -> None:
    # A subscription that starts mid-match: the snapshot holds the history so far and an
    # update may repeat its last entries; each is shown (and followed) once.
    states = played("medina-v2", 2, 7, 0)
    snapshot = convert.observation_to_proto(observe(states[5], None))
    first = states[4].n_events
    again = convert.events_to_proto(first, states[6].events_since(first))
    view = Spectator(states[0])
    view.message(admin_pb2.WatchResponse(snapshot=snapshot))
    view.message(admin_pb2.WatchResponse(update=game_pb2.Update(events=again)))
    view.progress.flush()
    assert view.game.state.n_events == states[6].n_events
    parts = [m.group(3) for m in map(TURN.match, capsys.readouterr().out.splitlines()) if m]
    assert sum(len(p.split(", ")) for p in parts) == 6  # the 6 decisions, once each


def test_the_scoreboard_escapes_names_and_details_that_would_act_on_a_terminal() -> None:
    from medina.cli.progress import scoreboard
    from medina.engine import result
    from medina.referee.outcome import MatchOutcome, SeatOutcome, Termination

    final = played("medina-v2", 2, 3, 0)[-1]
    r = result(final)
    seats = tuple(
        SeatOutcome(s, "evil\nname\x1b[31m", r.totals[s], 1 + s, r.breakdowns[s],
                    Termination.CRASHED if s else Termination.NORMAL, "log: \x1b[2K", 0)
        for s in range(2)
    )  # fmt: skip
    table = scoreboard(final, MatchOutcome(seats, complete=True))
    assert "\x1b" not in table and len(table.splitlines()) == 3
    assert "evil\\nname\\x1b" in table and "(log: \\x1b[2K)" in table
