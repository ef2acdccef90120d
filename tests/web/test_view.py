"""The JSON the pages draw: the spectator's view of the engine state (no hidden supply), and
replays whose step N is the engine's state after N decisions."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import re
from pathlib import Path

import pytest
from medina.engine import (
    CONFIGURATIONS,
    EventKind,
    GameState,
    apply_action,
    legal_moves,
    new_game,
    result,
)
from medina.engine.notation import BY_REFEREE, describe_move
from medina.records.reader import read_record
from medina.records.replay import replay, start_state
from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy
from medina.web.shelf import RecordShelf, UnknownRecordError
from medina.web.story import Stories, Story
from medina.web.view import board_view


def playout(ruleset: str, players: int, seed: int, decisions: int | None = None) -> list[GameState]:
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed=seed)
    states = [s]
    while not s.over and (decisions is None or len(states) <= decisions):
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        states.append(s)
    return states


def write_match(directory: Path, match_id: str, players: int = 3, seed: int = 4) -> Path:
    writer = RecordWriter(directory, match_id)
    settings = MatchSettings("medina-v2", players, seed)
    match = local_match(
        match_id, settings, [random_policy(seed + i) for i in range(players)], writer
    )
    asyncio.run(match.run())
    writer.close()
    return writer.path


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_the_view_counts_what_the_engine_holds_and_hides_supplies(
    ruleset: str, players: int
) -> None:
    for s in playout(ruleset, players, 3)[::9]:
        view = board_view(s)
        assert view["pieces"] == {
            "buildings": sum(m.bit_count() for m in s.buildings),
            "stables": s.stables.bit_count(),
            "walls": s.walls.bit_count(),
            "merchants": s.merchants.bit_count(),
            "rooftops": sum(1 for p in s.palaces if p.claimed),
        }
        assert [seat["score"] for seat in view["seats"]] == list(result(s).totals)
        for seat in view["seats"]:
            shown = seat["supply"] is not None
            assert shown == bool((s.revealed >> seat["seat"]) & 1), seat
        assert all(seat["supply"] is not None for seat in board_view(s, full=True)["seats"])
        g = s.rules.geometry
        for sq in view["gates"]:
            assert (g.wall_spaces >> sq) & 1 and not (s.walls >> sq) & 1
            assert (g.adjacent[sq] & (s.walls | g.tower_mask)).bit_count() >= 2


def test_the_view_names_seats_and_lists_the_last_moves() -> None:
    s = playout("medina-v2", 3, 8, decisions=20)[-1]
    view = board_view(s, names=["ann", "", "cy"], history=5)
    assert [seat["name"] for seat in view["seats"]] == ["ann", "seat 1", "cy"]
    assert len(view["last_moves"]) == 5
    assert all(line["text"].startswith(("seat ", "game over")) for line in view["last_moves"])
    # Numbered by step as the replay numbers them: the newest is the 20th decision.
    steps = [line["step"] for line in view["last_moves"] if line["step"] is not None]
    assert steps == list(range(21 - len(steps), 21))
    # After a scripted opening of 15 decisions, step 0 is the position it leaves.
    opened = board_view(s, history=5, start=15)["last_moves"]
    assert [line["step"] for line in opened if line["step"] is not None][-1] == 5
    assert view["decisions"] == 20 and view["cols"] * view["rows"] == s.rules.geometry.size


def test_a_replay_has_the_engine_state_at_every_step(tmp_path: Path) -> None:
    path = write_match(tmp_path, "m1")
    data = RecordShelf(tmp_path).replay("m1")
    record = read_record(path)
    _settings, state = start_state(record)
    states = [state] + [step.after for step in replay(record)]
    assert len(data["frames"]) == len(states) == len(data["moves"]) + 1
    names = data["names"]
    for frame, s in zip(data["frames"], states, strict=True):
        assert frame == board_view(s, names=names, full=True)
    assert data["complete"] and data["full"] and data["error"] is None
    assert data["result"]["ending"] == "complete"
    assert [m["index"] for m in data["moves"]] == list(range(len(states) - 1))
    assert data["moves"][0]["source"] == "bot"


def test_a_record_without_an_outcome_replays_as_far_as_it_goes_without_supplies(
    tmp_path: Path,
) -> None:
    path = write_match(tmp_path, "m2")
    lines = path.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:30]) + lines[30][:10])  # a crash mid-line
    data = RecordShelf(tmp_path).replay("cut")
    assert data["truncated"] and not data["complete"] and data["result"] is None
    assert len(data["frames"]) == len(data["moves"]) + 1 > 1
    assert all(seat["supply"] is None for f in data["frames"] for seat in f["seats"])


@pytest.mark.parametrize(
    ("record_id", "says"),
    [
        ("../etc/passwd", "is not a record id"),
        ("a/b", "is not a record id"),
        ("", "is not a record id"),
        ("x..y", "is not a record id"),
        ("absent", "no record 'absent' in "),
    ],
)
def test_bad_record_ids_are_refused_by_name(tmp_path: Path, record_id: str, says: str) -> None:
    with pytest.raises(UnknownRecordError, match=re.escape(says)):
        RecordShelf(tmp_path).replay(record_id)


def test_an_unreadable_record_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_text("not json\n")
    with pytest.raises(UnknownRecordError, match=r"cannot be read: .*not JSON"):
        RecordShelf(tmp_path).replay("junk")


def test_the_shelf_lists_records_newest_first_and_notices_changes(tmp_path: Path) -> None:
    shelf = RecordShelf(tmp_path / "none")
    assert shelf.list() == []
    shelf = RecordShelf(tmp_path)
    write_match(tmp_path, "old")
    write_match(tmp_path, "new", seed=5)
    os.utime(tmp_path / "old.jsonl", (1_000_000, 1_000_000))
    assert [m.match_id for m in shelf.list()] == ["new", "old"]
    (tmp_path / "new.jsonl").unlink()
    assert [m.match_id for m in shelf.list()] == ["old"]
    assert shelf.list()[0].state.value == "finished"


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_the_last_move_is_the_newest_decision_and_its_turns_earlier_placements(
    ruleset: str, players: int
) -> None:
    states = playout(ruleset, players, 5)
    assert board_view(states[0])["last"] is None
    turn: list[int] = []
    for before, after in itertools.pairwise(states):
        new = after.events_since(before.n_events)
        move = next(e for e in new if e.kind in (EventKind.PLACED, EventKind.TEA_SPENT))
        last = board_view(after)["last"]
        assert last["seat"] == move.seat == before.to_move
        square = move.square if move.kind is EventKind.PLACED else None
        assert last["square"] == square
        assert last["turn"] == turn
        assert last["text"] == describe_move(after.rules.geometry, move)
        started = any(e.kind is EventKind.TURN_STARTED for e in new)
        turn = (
            []
            if started or after.to_move != move.seat
            else [*turn, *([square] if square is not None else [])]
        )


def test_moves_the_referee_chose_are_marked_in_the_last_moves() -> None:
    s = new_game("medina-v2", 2, seed=3)
    s = apply_action(s, legal_moves(s).nth(0))
    s = apply_action(s, legal_moves(s).nth(0), by_referee=True)
    lines = board_view(s)["last_moves"]
    assert not lines[0]["text"].endswith(BY_REFEREE) and lines[1]["text"].endswith(BY_REFEREE)
    assert board_view(s)["last"]["by_referee"] is True


def test_a_replay_tells_the_story_step_by_step_to_the_final_scores(tmp_path: Path) -> None:
    write_match(tmp_path, "told")
    data = RecordShelf(tmp_path).replay("told")
    story = data["story"]
    assert [p["step"] for p in story] == list(range(len(data["frames"])))
    for point, frame in zip(story, data["frames"], strict=True):
        assert point["scores"] == [seat["score"] for seat in frame["seats"]]
    assert story[-1]["scores"] == [s["total"] for s in data["result"]["seats"]]
    claims = [m for p in story for m in p["marks"] if m["kind"] == "claim"]
    roofs = [m for m in data["moves"] if m["text"].startswith("rooftop on ")]
    assert len(claims) == len(roofs) > 0
    assert all(re.fullmatch(r"claims the \w+ palace", m["text"]) for m in claims)
    tiles = [m for p in story for m in p["marks"] if m["kind"] == "tile"]
    assert tiles and all(
        re.fullmatch(r"takes the (\w+ palace|tower \d) tile", m["text"]) for m in tiles
    )


def test_a_live_story_rebuilt_from_the_history_equals_the_replays() -> None:
    states = playout("medina-v1", 3, 6)
    story = Story(states[0])
    rebuilt = story.history(states[0], states[-1])
    stepped = [story.point(states[0])] + [story.step(b, a) for b, a in itertools.pairwise(states)]
    assert rebuilt == stepped and len(rebuilt) == len(states)


def test_viewers_of_a_match_share_its_story_so_far() -> None:
    """A later page gets the same points as a fresh follow, from what an earlier one found."""
    states = playout("medina-v2", 4, 7)
    story = Story(states[0])
    stories = Stories()
    match = Story(states[0])  # any object stands for the match
    middle = len(states) // 2
    assert stories.history(match, story, states[0], states[middle]) == story.history(
        states[0], states[middle]
    )
    assert stories.history(match, story, states[0], states[-1]) == story.history(
        states[0], states[-1]
    )
    assert stories.history(match, story, states[0], states[-1])[-1]["scores"] == list(
        result(states[-1]).totals
    )
