"""``replay verify``: a record replays through the engine to exactly its recorded result."""

from __future__ import annotations

from dataclasses import dataclass, replace

from medina.engine import GameState, result, square_name
from medina.referee.errors import ConfigError
from medina.referee.outcome import ranks_with_forfeits
from medina.v1 import match_pb2, record_pb2
from medina.wire.settings import settings_from_proto
from medina.wire.shared.scores import breakdown_to_proto

from .catalog import CUT_OFF, UNFINISHED
from .reader import Record
from .replay import replay_to_end

_PLAYED_ON = (match_pb2.TERMINATION_NORMAL, match_pb2.TERMINATION_ABORTED)


@dataclass(frozen=True)
class VerifyReport:
    """What ``verify_record`` found.

    ``line`` and ``decision`` locate the first problem (0 and -1 when there is
    none, or when it is not about one decision).
    """

    path: str
    ok: bool
    decisions: int  # decisions replayed successfully
    complete: bool  # the game was played to its end
    problem: str = ""  # the first problem, naming its line
    note: str = ""  # e.g. "aborted: ..." or ``catalog.UNFINISHED``
    line: int = 0
    decision: int = -1
    #: What replays but is not what this arena writes: the header's setup is not the one its
    #: seed draws (a record of another tool may draw differently; one of this arena's must
    #: not). Empty when there is nothing to say.
    warning: str = ""

    def summary(self) -> str:
        """One human-readable paragraph."""
        if not self.ok:
            return f"{self.path}: INVALID after {self.decisions} good decision(s): {self.problem}"
        text = f"{self.path}: OK, {self.decisions} decisions replayed"
        text += "; the final result matches the engine" if self.complete else f"; {self.note}"
        return f"{text}; warning: {self.warning}" if self.warning else text


def verify_record(record: Record) -> VerifyReport:
    """Replay ``record`` through the engine and compare its outcome with the engine's scoring.

    Every decision must be by the seat to move and legal; at the end the totals
    and breakdowns must be the engine's and the ranks the referee's rule (seats
    that forfeited rank last). An aborted or unfinished record (no outcome line: a
    match still being played, or whose server stopped) verifies up to its last
    complete entry, and the report says so. A setup that is not the one the
    header's seed draws replays from the record's squares, with a ``warning``.
    """
    report = _verify(record)
    warning = setup_mismatch(record) if report.ok else ""
    return replace(report, warning=warning) if warning else report


def setup_mismatch(record: Record) -> str:
    """Why the header's setup (well, start merchant) is not the one its configuration draws
    from its seed, or "" when it is (or the ruleset draws none)."""
    setup = record.header.setup
    if not (setup.HasField("well") and setup.HasField("start_merchant")):
        return ""
    try:
        s = replace(settings_from_proto(record.header.config), opening=()).new_game()
    except ConfigError:
        return ""  # the replay names it
    if not s.rules.well or not s.merchants:
        return ""
    merchant = (s.merchants & -s.merchants).bit_length() - 1
    if (setup.well, setup.start_merchant) == (s.well, merchant):
        return ""
    g = s.rules.geometry

    def square(sq: int) -> str:
        return square_name(g, sq) if 0 <= sq < g.size else str(sq)

    return (
        f"line 1: the setup (well {square(setup.well)}, start merchant "
        f"{square(setup.start_merchant)}) is not the one seed {record.header.config.seed} draws "
        f"(well {square(s.well)}, start merchant {square(merchant)}); replayed from the "
        "record's squares"
    )


def _verify(record: Record) -> VerifyReport:
    state, count, error = replay_to_end(record)
    if error is not None or state is None:
        assert error is not None
        return VerifyReport(
            record.path, False, count, False, str(error), line=error.line, decision=error.decision
        )
    problem, line, decision = _check_timeouts(record)
    if problem:
        return VerifyReport(record.path, False, count, False, problem, line=line, decision=decision)
    outcome = record.outcome
    if outcome is None:
        note = f"{UNFINISHED}; verified up to the last complete entry"
        return VerifyReport(
            record.path,
            True,
            count,
            False,
            note=f"{note}; {CUT_OFF}" if record.truncated else note,
        )
    problem = _check_outcome(record, state, outcome)
    if problem:
        line = record.outcome_line
        return VerifyReport(record.path, False, count, state.over, problem, line=line)
    if outcome.result.ending == match_pb2.MATCH_ENDING_ABANDONED:
        return VerifyReport(
            record.path,
            True,
            count,
            False,
            note="abandoned: no seat's bot ever connected; nothing was played",
        )
    if outcome.result.ending != match_pb2.MATCH_ENDING_COMPLETE:
        return VerifyReport(
            record.path,
            True,
            count,
            False,
            note="aborted: scores match the board when it stopped; verified up to the last entry",
        )
    return VerifyReport(record.path, True, count, True)


def _check_timeouts(record: Record) -> tuple[str, int, int]:
    """The first mismatch between the referee's timeouts and the moves it made for them, with
    its line and decision: each TIMEOUT incident of a seat is followed by the referee's move
    for that seat (a strike's random move, or the fallback of a seat that struck out), and
    each such strike move by its incident. ("", 0, -1) when they match."""
    struck = {
        (e.incident.seat, e.incident.at_decision): n
        for n, e in record.entries
        if e.HasField("incident") and e.incident.kind == record_pb2.INCIDENT_KIND_TIMEOUT
    }
    decisions = {d.index: (n, d) for n, d in record.decisions}
    for n, d in record.decisions:
        if d.source == record_pb2.DECISION_SOURCE_TIMEOUT and (d.seat, d.index) not in struck:
            return (
                f"line {n}: decision {d.index} is the referee's move after a timeout of seat "
                f"{d.seat}, but the record has no such timeout",
                n,
                d.index,
            )
    for (seat, at), n in struck.items():
        if at not in decisions:
            continue  # the record stops before the move (unfinished)
        line, d = decisions[at]
        if d.seat != seat or d.source not in _REFEREE_MOVES:
            return (
                f"line {line}: seat {seat} timed out at decision {at} (line {n}), but decision "
                f"{at} is not the referee's move for it",
                line,
                at,
            )
    return "", 0, -1


_REFEREE_MOVES = (record_pb2.DECISION_SOURCE_TIMEOUT, record_pb2.DECISION_SOURCE_FALLBACK)


def _check_outcome(record: Record, s: GameState, outcome: record_pb2.RecordOutcome) -> str:
    line = record.outcome_line
    res = outcome.result
    complete = res.ending == match_pb2.MATCH_ENDING_COMPLETE
    if res.ending == match_pb2.MATCH_ENDING_ABANDONED and count_decisions(record):
        return f"line {line}: the outcome says abandoned, but decisions were played"
    if complete and not s.over:
        return f"line {line}: the outcome says complete, but the game is not over"
    if not complete and s.over and not _aborted(record):
        return f"line {line}: the game is over, but the outcome says incomplete"
    if len(res.seats) != s.players:
        return f"line {line}: {len(res.seats)} seat results for {s.players} players"
    forfeits = record.forfeits
    for seat, r in enumerate(res.seats):
        if r.seat != seat:
            return f"line {line}: seat results out of order (seat {r.seat} at position {seat})"
        if seat in forfeits and forfeits[seat] not in (0, r.termination):
            return (
                f"line {line}: seat {seat} forfeited with termination {forfeits[seat]}, "
                f"but its result says {r.termination}"
            )
        strikes = sum(1 for seat_, _at in _timeouts(record) if seat_ == seat)
        if r.strikes != strikes:
            return (
                f"line {line}: seat {seat} has {r.strikes} strike(s), but the record has "
                f"{strikes} timeout(s) of it"
            )
        if r.termination not in _PLAYED_ON and seat not in forfeits:
            name = match_pb2.Termination.Name(r.termination).removeprefix("TERMINATION_")
            return (
                f"line {line}: seat {seat}'s result says {name.lower()}, but the record has no "
                "forfeit of that seat"
            )
    engine = result(s)
    forfeited = tuple(
        r.termination not in _PLAYED_ON or seat in forfeits for seat, r in enumerate(res.seats)
    )
    ranks = ranks_with_forfeits(engine.totals, forfeited)
    for seat, r in enumerate(res.seats):
        if r.total != engine.totals[seat]:
            return (
                f"line {line}: seat {seat} total {r.total}, but the board scores "
                f"{engine.totals[seat]}"
            )
        expected = breakdown_to_proto(engine.breakdowns[seat])
        if not r.breakdown.total:
            expected.ClearField("total")  # written before protocol 1.1 added it
        if r.breakdown != expected:
            return f"line {line}: seat {seat} score breakdown differs from the engine's"
        if r.rank != ranks[seat]:
            return f"line {line}: seat {seat} rank {r.rank}, expected {ranks[seat]}"
    return ""


def _timeouts(record: Record) -> list[tuple[int, int]]:
    """(seat, decision) of every TIMEOUT incident (a strike each)."""
    return [
        (e.incident.seat, e.incident.at_decision)
        for _n, e in record.entries
        if e.HasField("incident") and e.incident.kind == record_pb2.INCIDENT_KIND_TIMEOUT
    ]


def _aborted(record: Record) -> bool:
    return any(
        e.HasField("incident") and e.incident.kind == record_pb2.INCIDENT_KIND_ABORTED
        for _n, e in record.entries
    )


def count_decisions(record: Record) -> int:
    """Decisions in ``record``."""
    return sum(1 for _n, e in record.entries if e.HasField("decision"))
