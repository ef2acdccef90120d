"""``replay verify``: a record replays through the engine to exactly its recorded result."""

from __future__ import annotations

from dataclasses import dataclass

from medina.engine import GameState, result
from medina.referee.outcome import ranks_with_forfeits
from medina.v1 import match_pb2, record_pb2
from medina.wire.settings import breakdown_to_proto

from .reader import Record
from .replay import ReplayError, replay, start_state


@dataclass(frozen=True)
class VerifyReport:
    """What ``verify_record`` found."""

    path: str
    ok: bool
    decisions: int  # decisions replayed successfully
    complete: bool  # the game was played to its end
    problem: str = ""  # the first problem, naming its line
    note: str = ""  # e.g. "aborted" or "interrupted"

    def summary(self) -> str:
        """One human-readable paragraph."""
        if not self.ok:
            return f"{self.path}: INVALID after {self.decisions} good decision(s): {self.problem}"
        text = f"{self.path}: OK, {self.decisions} decisions replayed"
        if self.complete:
            return text + "; the final result matches the engine"
        return f"{text}; {self.note}"


def verify_record(record: Record) -> VerifyReport:
    """Replay ``record`` and compare its outcome with the engine's scoring."""
    count = 0
    try:
        _settings, state = start_state(record)
        for step in replay(record):
            count += 1
            state = step.after
    except ReplayError as exc:
        return VerifyReport(record.path, False, count, False, problem=str(exc))
    outcome = record.outcome
    if outcome is None:
        how = " (last line truncated)" if record.truncated else ""
        return VerifyReport(
            record.path,
            True,
            count,
            False,
            note=f"interrupted: no outcome{how}; verified up to the last complete entry",
        )
    problem = _check_outcome(record, state, outcome)
    if problem:
        return VerifyReport(record.path, False, count, state.over, problem=problem)
    if not outcome.result.complete:
        return VerifyReport(
            record.path,
            True,
            count,
            False,
            note="aborted: scores match the board when it stopped",
        )
    return VerifyReport(record.path, True, count, True)


def _check_outcome(record: Record, s: GameState, outcome: record_pb2.RecordOutcome) -> str:
    line = record.outcome_line
    res = outcome.result
    if res.complete and not s.over:
        return f"line {line}: the outcome says complete, but the game is not over"
    if not res.complete and s.over and not _aborted(record):
        return f"line {line}: the game is over, but the outcome says incomplete"
    if len(res.seats) != s.players:
        return f"line {line}: {len(res.seats)} seat results for {s.players} players"
    engine = result(s)
    forfeited = tuple(
        r.termination not in (match_pb2.TERMINATION_NORMAL, match_pb2.TERMINATION_ABORTED)
        for r in res.seats
    )
    ranks = ranks_with_forfeits(engine.totals, forfeited)
    for seat, r in enumerate(res.seats):
        if r.seat != seat:
            return f"line {line}: seat results out of order (seat {r.seat} at position {seat})"
        if r.total != engine.totals[seat]:
            return (
                f"line {line}: seat {seat} total {r.total}, but the board scores "
                f"{engine.totals[seat]}"
            )
        if r.breakdown != breakdown_to_proto(engine.breakdowns[seat]):
            return f"line {line}: seat {seat} score breakdown differs from the engine's"
        if r.rank != ranks[seat]:
            return f"line {line}: seat {seat} rank {r.rank}, expected {ranks[seat]}"
    return ""


def _aborted(record: Record) -> bool:
    return any(
        e.HasField("incident") and e.incident.kind == record_pb2.INCIDENT_KIND_ABORTED
        for _n, e in record.entries
    )
