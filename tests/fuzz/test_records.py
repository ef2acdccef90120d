"""Fuzzing record parsing: any text is a record or a RecordError naming a line; a record
that parses always verifies to a report (never an exception), however it was damaged."""

from __future__ import annotations

import asyncio
import tempfile
from functools import lru_cache
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from medina.records.errors import RecordError
from medina.records.reader import parse_record
from medina.records.verify import verify_record
from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy

from .strategies import FUZZ


@lru_cache(maxsize=8)
def record_text(ruleset: str, players: int, seed: int) -> str:
    with tempfile.TemporaryDirectory() as d:
        writer = RecordWriter(Path(d), f"fuzz-{seed}")
        settings = MatchSettings(ruleset, players, seed)
        policies = [random_policy(seed * 10 + i) for i in range(players)]
        asyncio.run(local_match(f"fuzz-{seed}", settings, policies, writer).run())
        writer.close()
        return writer.path.read_text()


def check(text: str, allow_truncated: bool) -> None:
    try:
        record = parse_record(text, "fuzz", allow_truncated=allow_truncated)
    except RecordError as exc:
        assert str(exc).startswith("fuzz")
        return
    report = verify_record(record)
    assert report.ok or report.problem


@FUZZ
@given(st.text(max_size=400), st.booleans())
def test_any_text_is_a_record_or_a_record_error(text: str, allow_truncated: bool) -> None:
    check(text, allow_truncated)


CONFIGS = [("medina-v2", 3), ("medina-v1", 4), ("medina-v1-2p", 2)]


@FUZZ
@given(st.sampled_from(CONFIGS), st.integers(1, 3), st.data(), st.booleans())
def test_damaged_records_are_refused_or_verified_to_a_report(
    config: tuple[str, int], seed: int, data: st.DataObject, allow_truncated: bool
) -> None:
    lines = record_text(*config, seed).splitlines(keepends=True)
    for _ in range(data.draw(st.integers(1, 3))):
        n = data.draw(st.integers(0, len(lines) - 1))
        how = data.draw(st.sampled_from(["flip", "drop", "swap", "cut", "number"]))
        line = lines[n]
        if how == "flip" and len(line) > 1:
            at = data.draw(st.integers(0, len(line) - 2))
            char = data.draw(st.characters(codec="utf-8"))
            lines[n] = line[:at] + char + line[at + 1 :]
        elif how == "drop":
            del lines[n]
        elif how == "swap":
            m = data.draw(st.integers(0, len(lines) - 1))
            lines[n], lines[m] = lines[m], lines[n]
        elif how == "cut":
            lines = [*lines[:n], line[: data.draw(st.integers(0, len(line)))]]
        else:  # change one number somewhere in the line
            digits = [i for i, c in enumerate(line) if c.isdigit()]
            if digits:
                at = data.draw(st.sampled_from(digits))
                lines[n] = line[:at] + str(data.draw(st.integers(0, 99))) + line[at + 1 :]
        if not lines:
            break
    check("".join(lines), allow_truncated)
