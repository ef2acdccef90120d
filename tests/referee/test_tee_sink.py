"""TeeSink: the record gets every entry first; a listener that fails costs nothing."""

from __future__ import annotations

import asyncio

import pytest
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy
from medina.referee.outcome import MatchOutcome
from medina.referee.record import DecisionEntry, MemorySink, TeeSink


class Broken(MemorySink):
    def decision(self, entry: DecisionEntry) -> None:
        raise RuntimeError("listener bug")


class FailingRecord(MemorySink):
    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        raise OSError("disk full")


def test_listeners_see_what_the_record_holds_and_a_broken_one_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    record, listener, broken = MemorySink(), MemorySink(), Broken()
    settings = MatchSettings("medina-v2", 2, 3)
    policies = [random_policy(1), random_policy(2)]
    outcome = asyncio.run(
        local_match("t", settings, policies, TeeSink(record, listener, broken)).run()
    )
    assert outcome.complete
    assert listener.decisions == record.decisions and len(record.decisions) > 50
    assert listener.incidents == record.incidents and listener.headers == record.headers
    assert listener.outcomes == record.outcomes == [outcome]
    assert broken.outcomes == [outcome]  # its failures were on decisions only
    assert "record listener" in caplog.text and "listener bug" in caplog.text


def test_listeners_hear_the_outcome_even_when_the_record_cannot_be_written() -> None:
    listener = MemorySink()
    tee = TeeSink(FailingRecord(), listener)
    settings = MatchSettings("medina-v2", 2, 3)
    outcome = asyncio.run(
        local_match("t", settings, [random_policy(1), random_policy(2)], tee).run()
    )
    assert listener.outcomes == [outcome]
