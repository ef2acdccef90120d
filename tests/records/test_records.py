"""Records: written line by line, read back, verified, shown; bad records name the line."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from medina.cli import main
from medina.engine import render
from medina.records.catalog import UNFINISHED
from medina.records.errors import RecordError
from medina.records.reader import parse_record, read_record
from medina.records.replay import replay, start_state
from medina.records.show import show_record
from medina.records.verify import verify_record
from medina.records.writer import RecordExistsError, RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy


def write_match(directory: Path, ruleset: str, players: int, seed: int) -> Path:
    writer = RecordWriter(directory, f"m-{ruleset}-{players}-{seed}")
    settings = MatchSettings(ruleset, players, seed)
    policies = [random_policy(seed * 10 + i) for i in range(players)]
    match = local_match(f"m-{seed}", settings, policies, writer)
    asyncio.run(match.run())
    writer.close()
    return writer.path


@pytest.mark.parametrize(
    ("ruleset", "players"), [("medina-v2", 4), ("medina-v1", 3), ("medina-v1-2p", 2)]
)
def test_a_written_record_verifies(tmp_path: Path, ruleset: str, players: int) -> None:
    path = write_match(tmp_path, ruleset, players, 2)
    lines = path.read_text().splitlines()
    assert all(json.loads(line) for line in lines)
    report = verify_record(read_record(path))
    assert report.ok and report.complete, report.summary()
    assert "final result matches" in report.summary()


def test_records_are_never_overwritten(tmp_path: Path) -> None:
    RecordWriter(tmp_path, "same").close()
    with pytest.raises(RecordExistsError, match="already exists"):
        RecordWriter(tmp_path, "same")


def test_unsafe_match_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="not usable as a file name"):
        RecordWriter(tmp_path, "../escape")


def test_an_illegal_action_names_its_line(tmp_path: Path) -> None:
    path = write_match(tmp_path, "medina-v2", 2, 4)
    lines = path.read_text().splitlines()
    target = next(i for i, line in enumerate(lines) if '"decision"' in line and '"index":5' in line)
    entry = json.loads(lines[target])
    entry["decision"]["action"] = {"kind": "ACTION_KIND_WALL", "square": 100}  # a city square
    lines[target] = json.dumps(entry)
    report = verify_record(parse_record("\n".join(lines) + "\n", "edited"))
    assert not report.ok
    assert f"line {target + 1}" in report.problem
    assert "decision 5" in report.problem and "wall" in report.problem


def test_a_changed_score_is_caught(tmp_path: Path) -> None:
    path = write_match(tmp_path, "medina-v1", 3, 6)
    lines = path.read_text().splitlines()
    outcome = json.loads(lines[-1])
    outcome["outcome"]["result"]["seats"][0]["total"] = 999
    lines[-1] = json.dumps(outcome)
    report = verify_record(parse_record("\n".join(lines) + "\n", "edited"))
    assert not report.ok and "999" in report.problem


def test_a_truncated_record_verifies_up_to_its_last_line(tmp_path: Path) -> None:
    path = write_match(tmp_path, "medina-v2", 3, 8)
    text = path.read_text()
    cut = text[: len(text) // 2]  # mid-line, like a crash while writing
    with pytest.raises(RecordError, match="truncated"):
        parse_record(cut, "cut")
    record = parse_record(cut, "cut", allow_truncated=True)
    assert record.truncated and record.outcome is None
    report = verify_record(record)
    assert report.ok and not report.complete and report.note.startswith(UNFINISHED)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty record"),
        ("not json\n", "line 1: not JSON"),
        ("[1, 2]\n", "line 1: expected a JSON object"),
        ('{"decision": {"index": 0}}\n', "first entry must be a header"),
        ('{"header": {}}\n{"header": {}}\n', "line 2: a second header"),
        ('{"header": {}}\n{"outcome": {}}\n{"decision": {}}\n', "line 3: entry after the outcome"),
        ('{"header": {}}\n{"bogus": 1}\n', "line 2: not a RecordEntry"),
        ('{"header": {"formatVersion": 9}}\n', "newer than this tool"),
    ],
)
def test_bad_records_name_the_problem(text: str, fragment: str) -> None:
    with pytest.raises(RecordError, match=fragment):
        parse_record(text, "bad")


def test_show_prints_turns_with_the_viewers_notation(tmp_path: Path) -> None:
    record = read_record(write_match(tmp_path, "medina-v2", 2, 9))
    text = show_record(record)
    assert text.count("T1") >= 10 and "rank 1:" in text
    assert re.search(r"^seat 0: (grey|purple|brown|orange) building [A-R]\d+", text, re.M)


def test_show_at_numbers_steps_as_the_viewer_does(tmp_path: Path) -> None:
    """``--at N`` is the viewer's step N: the board after N decisions, 0 the start."""
    record = read_record(write_match(tmp_path, "medina-v2", 2, 9))
    _settings, start = start_state(record)
    states = [start, *(step.after for step in replay(record))]
    last = len(states) - 1
    assert show_record(record, at=0) == f"step 0 of {last} (the start):\n{render(start)}"
    for n in (1, 3, last):
        shown = show_record(record, at=n)
        assert shown.startswith(f"step {n} of {last} (seat ")
        assert shown.endswith(render(states[n])), f"step {n}"
    with pytest.raises(
        ValueError, match=rf"no step {last + 1}: its steps are 0 \(the start\) to {last}$"
    ):
        show_record(record, at=last + 1)
    with pytest.raises(ValueError, match="--at must be 0 or more"):
        show_record(record, at=-1)


def test_an_entry_of_unknown_fields_is_refused_in_one_line() -> None:
    # protobuf's own message goes on to list every field of RecordEntry on more lines
    with pytest.raises(RecordError) as info:
        parse_record('{"header": {}}\n{"garbage": 1}\n', "bad")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("bad line 2: not a RecordEntry (") and "garbage" in message


def test_verify_calls_a_record_with_lines_out_of_order_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # exit 1 like any bad entry (it was 2, the status of a command that could not run, with
    # the path said twice); no file at all is still 2
    path = write_match(tmp_path, "medina-v2", 2, 8)
    lines = path.read_text().splitlines()
    decisions = [i for i, line in enumerate(lines) if line.startswith('{"decision"')]
    a, b = decisions[3], decisions[4]
    lines[a], lines[b] = lines[b], lines[a]
    path.write_text("\n".join(lines) + "\n")
    assert main(["replay", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out == f"{path}: INVALID: line {a + 1}: decision 4 out of order (expected decision 3)\n"
    assert main(["replay", "verify", str(tmp_path / "none.jsonl")]) == 2
    assert (
        capsys.readouterr().err
        == f"medina-arena replay: no such record file: {tmp_path}/none.jsonl\n"
    )


def test_show_escapes_a_name_that_would_act_on_a_terminal(tmp_path: Path) -> None:
    # Servers before HELLO_INVALID took any Hello.bot_name: their records may hold a
    # newline or ESC in a seat's name, which `replay show` printed raw.
    path = write_match(tmp_path, "medina-v2", 2, 9)
    lines = path.read_text().splitlines()
    outcome = json.loads(lines[-1])
    outcome["outcome"]["result"]["seats"][0]["name"] = "evil\nname\x1b[31m"
    path.write_text("\n".join([*lines[:-1], json.dumps(outcome)]) + "\n")
    text = show_record(read_record(path))
    assert "evil\\nname\\x1b[31m" in text and "\x1b" not in text
