"""records.verify on records written straight from engine self-play (no referee)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from medina.engine import CONFIGURATIONS, apply_action, legal_moves, new_game, result
from medina.engine.geometry import lowest
from medina.records.catalog import CUT_OFF
from medina.records.errors import RecordError
from medina.records.reader import parse_record, read_record
from medina.records.verify import VerifyReport, verify_record
from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome, SeatOutcome, Termination, ranks_with_forfeits
from medina.referee.record import (
    DecisionEntry,
    DecisionSource,
    Header,
    Incident,
    IncidentKind,
    SeatInfo,
)

STAMP = "2026-01-01T00:00:00Z"


def engine_record(
    directory: Path,
    ruleset: str,
    players: int,
    seed: int,
    *,
    forfeit: int | None = None,
    setup: tuple[int, int] | None = None,
    stop_after: int | None = None,
) -> Path:
    """A record of a seeded random game played with the engine alone.

    ``forfeit``: that seat times out for good at decision 10 (a fallback plays it).
    ``setup``: (well, start merchant) drawn by "another tool". ``stop_after``: abort there.
    """
    settings = MatchSettings(ruleset, players, seed, start_seat=seed % players)
    well, merchant = setup if setup is not None else (None, None)
    s = new_game(
        ruleset, players, seed, start_seat=settings.start_seat, well=well, start_merchant=merchant
    )
    seats = tuple(SeatInfo(i, f"p{i}", "engine", "1") for i in range(players))
    start = lowest(s.merchants) if s.merchants else -1
    header = Header(f"e-{ruleset}-{players}-{seed}", settings, s.well, start, seats, STAMP, "test")
    rng = random.Random(seed)
    terminations = [Termination.NORMAL] * players
    with RecordWriter(directory, header.match_id) as writer:
        writer.header(header)
        while not s.over and s.decisions != stop_after:
            if s.decisions == 10 and forfeit is not None:
                terminations[forfeit] = Termination.TIMEOUT
                writer.incident(
                    Incident(IncidentKind.FORFEIT, forfeit, "too slow", 10, Termination.TIMEOUT)
                )
            moves = legal_moves(s)
            action = moves.nth(rng.randrange(len(moves)))
            source = DecisionSource.FALLBACK if s.to_move == forfeit else DecisionSource.BOT
            writer.decision(
                DecisionEntry(s.decisions, s.to_move, s.decisions + 1, action, 5, (), source)
            )
            s = apply_action(s, action)
        if not s.over:
            writer.incident(Incident(IncidentKind.ABORTED, -1, "stopped", s.decisions))
            terminations = [Termination.ABORTED] * players
        res = result(s)
        forfeited = tuple(t not in (Termination.NORMAL, Termination.ABORTED) for t in terminations)
        ranks = ranks_with_forfeits(res.totals, forfeited)
        outcome = MatchOutcome(
            seats=tuple(
                SeatOutcome(
                    i, f"p{i}", res.totals[i], ranks[i], res.breakdowns[i], terminations[i], "", 0
                )
                for i in range(players)
            ),
            complete=s.over,
        )
        writer.outcome(outcome, STAMP)
    return writer.path


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_an_engine_game_record_verifies(tmp_path: Path, ruleset: str, players: int) -> None:
    path = engine_record(tmp_path, ruleset, players, 3)
    report = verify_record(read_record(str(path)))
    assert report.ok and report.complete, report.summary()
    assert report.decisions == sum(
        1 for line in path.read_text().splitlines() if line.startswith('{"decision"')
    )


def test_a_forfeited_seat_ranks_last(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v2", 3, 5, forfeit=1)
    assert verify_record(read_record(path)).ok
    lines = path.read_text().splitlines()
    outcome = json.loads(lines[-1])
    for seat in outcome["outcome"]["result"]["seats"]:
        seat["termination"] = "TERMINATION_NORMAL"  # hide the forfeit: the incident still says it
    lines[-1] = json.dumps(outcome)
    report = verify_record(parse_record("\n".join(lines) + "\n", "hidden"))
    assert not report.ok and "forfeited with termination" in report.problem
    assert report.line == len(lines)


def test_another_tools_setup_draw_is_used(tmp_path: Path) -> None:
    default = new_game("medina-v2", 4, 8)
    inner = [
        sq for sq in range(default.rules.geometry.size) if (default.rules.geometry.inner >> sq) & 1
    ]
    well = next(sq for sq in inner if sq != default.well)
    merchant = next(sq for sq in reversed(inner) if (1 << sq) != default.merchants)
    path = engine_record(tmp_path, "medina-v2", 4, 8, setup=(well, merchant))
    record = read_record(path)
    assert (record.header.setup.well, record.header.setup.start_merchant) == (well, merchant)
    report = verify_record(record)
    assert report.ok and report.complete
    # ... but it is said: a record of this arena whose seed was edited reads just the same
    assert report.warning.startswith("line 1: the setup (well ")
    assert "is not the one seed 8 draws" in report.warning
    assert report.summary().endswith("; warning: " + report.warning)


def test_a_seed_edited_in_the_header_is_warned_of(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v2", 2, 100)
    assert verify_record(read_record(path)).warning == ""
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["header"]["config"]["seed"] = "101"
    lines[0] = json.dumps(header)
    report = verify_record(parse_record("\n".join(lines) + "\n", "edited"))
    assert report.ok and "is not the one seed 101 draws" in report.warning, report.summary()


def test_a_forfeit_in_the_result_needs_its_forfeit_in_the_record(tmp_path: Path) -> None:
    # an edited outcome that charges a seat with a fault the game never had
    path = engine_record(tmp_path, "medina-v2", 3, 5)
    lines = path.read_text().splitlines()
    outcome = json.loads(lines[-1])
    outcome["outcome"]["result"]["seats"][1]["termination"] = "TERMINATION_CRASHED"
    lines[-1] = json.dumps(outcome)
    report = verify_record(parse_record("\n".join(lines) + "\n", "charged"))
    assert not report.ok and report.line == len(lines)
    assert report.problem == (
        f"line {len(lines)}: seat 1's result says crashed, but the record has no forfeit of "
        "that seat"
    )


def test_an_aborted_record_verifies_up_to_its_end(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v1", 4, 2, stop_after=25)
    report = verify_record(read_record(path))
    assert report.ok and not report.complete and report.decisions == 25
    assert "aborted" in report.note and "aborted" in report.summary()


def test_the_first_bad_decision_is_located(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v1-2p", 2, 6)
    lines = path.read_text().splitlines()
    target = next(i for i, line in enumerate(lines) if '"index":7,' in line)
    entry = json.loads(lines[target])
    entry["decision"]["seat"] = 1 - entry["decision"].get("seat", 0)  # 0 is left out
    lines[target] = json.dumps(entry)
    report = verify_record(parse_record("\n".join(lines) + "\n", "swapped"))
    assert not report.ok and (report.line, report.decision) == (target + 1, 7)
    assert "decision 7 is by seat" in report.problem and "to move" in report.problem


def test_an_illegal_action_is_named_in_a1_notation(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v2", 2, 4)
    lines = path.read_text().splitlines()
    target = next(i for i, line in enumerate(lines) if '"index":3,' in line)
    entry = json.loads(lines[target])
    entry["decision"]["action"] = {"kind": "ACTION_KIND_MERCHANT", "square": 0}  # tower 1
    lines[target] = json.dumps(entry)
    report = verify_record(parse_record("\n".join(lines) + "\n", "edited"))
    assert not report.ok and report.decision == 3
    assert f"line {target + 1}: decision 3 (merchant A1) is illegal" in report.problem


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"header": {}}\n{"decision": {"index": 1}}\n', "line 2: decision 1 out of order"),
        ('{"header": {}}\n{"decision": {"index": 0, "colour": 2}}\n', "line 2: not a Record"),
        ('{"header": {}}\n{"decision": {"index": 0}}\n{"decis', "line 3: truncated"),
    ],
)
def test_reader_errors_name_the_line(text: str, fragment: str) -> None:
    with pytest.raises(RecordError, match=fragment):
        parse_record(text, "r")


def test_a_truncated_record_keeps_its_complete_entries(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v2", 3, 9)
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    cut = "".join(lines[:20]) + lines[20][:15]
    record = parse_record(cut, "cut", allow_truncated=True)
    assert record.truncated and len(record.entries) == 19
    report = verify_record(record)
    assert report.ok and report.decisions == 19 and report.note.endswith(CUT_OFF)


def test_a_closed_writer_refuses_lines(tmp_path: Path) -> None:
    writer = RecordWriter(tmp_path / "new" / "dir", "closed")
    writer.close()
    writer.close()
    with pytest.raises(RecordError, match="is closed"):
        writer.incident(Incident(IncidentKind.CONNECTED, 0, "", 0))


def _edited(path: Path, edit: Callable[[list[dict[str, Any]]], None]) -> VerifyReport:
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    edit(entries)
    text = "".join(json.dumps(e) + "\n" for e in entries)
    return verify_record(parse_record(text, "edited"))


def _decision(entries: list[dict[str, Any]], index: int) -> dict[str, Any]:
    found: dict[str, Any] = next(
        e["decision"] for e in entries if "decision" in e and e["decision"].get("index", 0) == index
    )
    return found


def test_a_strike_move_needs_its_timeout_and_a_timeout_its_move(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v2", 2, 4)
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    seat = _decision(entries, 7).get("seat", 0)

    def marked(entries: list[dict[str, Any]]) -> None:  # a bot's move passed off as a strike
        _decision(entries, 7)["source"] = "DECISION_SOURCE_TIMEOUT"

    report = _edited(path, marked)
    assert not report.ok and report.decision == 7
    assert report.problem.endswith(
        f"decision 7 is the referee's move after a timeout of seat {seat}, but the record has "
        "no such timeout"
    ), report.problem

    def hidden(entries: list[dict[str, Any]]) -> None:  # a timeout whose move is the bot's
        at = next(
            i for i, e in enumerate(entries) if "decision" in e and e["decision"].get("index") == 7
        )
        incident = {"kind": "INCIDENT_KIND_TIMEOUT", "seat": seat, "atDecision": 7}
        entries.insert(at, {"incident": incident})

    report = _edited(path, hidden)
    assert not report.ok and report.decision == 7
    assert f"seat {seat} timed out at decision 7" in report.problem
    assert "decision 7 is not the referee's move for it" in report.problem


def test_the_strikes_of_the_result_are_the_records_timeouts(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v2", 3, 5)

    def struck(entries: list[dict[str, Any]]) -> None:
        entries[-1]["outcome"]["result"]["seats"][2]["strikes"] = 2

    report = _edited(path, struck)
    assert not report.ok
    assert report.problem.endswith("seat 2 has 2 strike(s), but the record has 0 timeout(s) of it")
