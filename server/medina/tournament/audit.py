"""A tournament checked against its file and its records (``tournament verify``): the stored
schedule is the one the stored configuration draws, and every stored result is its record's,
the record replaying through the engine to exactly that result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from medina.records import catalog
from medina.records.errors import RecordError
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.storage.tournaments import GameRow, ScheduledGame, TournamentStore
from medina.v1 import match_pb2
from medina.wire.shared.enums import RULESET_NAMES

from .config import TournamentConfig
from .schedule import ScheduledGame as PlannedGame
from .schedule import build

#: The stored ending of a game, by its record's.
_ENDINGS = {
    match_pb2.MATCH_ENDING_COMPLETE: "complete",
    match_pb2.MATCH_ENDING_ABANDONED: "abandoned",
    match_pb2.MATCH_ENDING_ABORTED: "aborted",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong: about a game (its number from 1) or the tournament as a whole (0)."""

    game: int
    text: str

    def line(self) -> str:
        """``game 12: ...`` or the text alone."""
        return f"game {self.game}: {self.text}" if self.game else self.text


@dataclass(frozen=True, slots=True)
class Audit:
    """What ``audit`` found: the games whose records were checked, what is wrong, and notes
    (records of attempts no result names) that are not wrong."""

    checked: int
    counts: dict[str, int]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Nothing is wrong."""
        return not self.findings


def audit(
    store: TournamentStore, tid: int, records: Path | None = None, out: Path | None = None
) -> Audit:
    """Check tournament ``tid`` of ``store``: its schedule against its configuration, and
    each finished game against its record (in ``records``, when given, by file name).
    ``out``: the tournament's output directory, whose records directory (the configuration's
    own, when it names one) is looked into for records no result names besides the results'
    directories."""
    row = next(t for t in store.tournaments() if t.id == tid)
    cfg = TournamentConfig.from_json(row.config)
    stored = store.schedule(tid)
    results = store.results(tid)
    findings = schedule_findings(build(cfg), stored)
    with_result = {g.number for g in results}
    for planned in stored:
        if planned.status == "done" and planned.number not in with_result:
            findings.append(Finding(planned.number + 1, "done, but no result of it is stored"))
    for key, what in (("match_id", "match"), ("record_path", "record")):
        repeated = Counter(getattr(g, key) for g in results)
        for value, n in sorted(repeated.items()):
            if n > 1:
                findings.append(Finding(0, f"{n} games name the same {what} {value}"))
    for game in results:
        findings.extend(Finding(game.number + 1, text) for text in game_findings(game, records))
    counts = Counter(s.status for s in stored)
    own = cfg.records_dir(out) if out is not None else None
    notes = orphan_notes(results, records, counts, own)
    return Audit(len(results), dict(counts), tuple(findings), tuple(notes))


def schedule_findings(
    planned: Sequence[PlannedGame], stored: Sequence[ScheduledGame]
) -> list[Finding]:
    """Where the stored schedule is not the one the configuration draws (seeds, rotations,
    seats)."""
    out = []
    if len(planned) != len(stored):
        why = f"{len(stored)} games stored, but the configuration schedules {len(planned)}"
        out.append(Finding(0, why))
    by_number = {g.number: g for g in stored}
    for p in planned:
        s = by_number.get(p.number)
        if s is None:
            out.append(Finding(p.number + 1, "scheduled, but not stored"))
            continue
        want = (p.block, p.variant.ruleset, p.variant.players, p.seed, p.rotation, p.seats)
        have = (s.block, s.ruleset, s.players, s.seed, s.rotation, s.seats)
        names = ("block", "ruleset", "players", "seed", "rotation", "seats")
        for name, w, h in zip(names, want, have, strict=True):
            if w != h:
                why = f"stored {name} {_show(h)}, but the configuration schedules {_show(w)}"
                out.append(Finding(p.number + 1, why))
    return out


def _show(value: object) -> str:
    return ", ".join(value) if isinstance(value, tuple) else str(value)


def game_findings(g: GameRow, records: Path | None = None) -> list[str]:
    """What does not hold between a finished game as stored and its record (found in
    ``records`` by its file name, when given: records copied elsewhere to be checked)."""
    if not g.record_path:
        return ["no record is stored for it"]
    path = Path(g.record_path) if records is None else records / Path(g.record_path).name
    if not path.is_file():
        return [f"its record {path} is missing"]
    try:
        record = read_record(path, allow_truncated=True)
    except RecordError as exc:
        return [f"its record is unreadable: {exc}"]
    report = verify_record(record)
    if not report.ok:
        return [f"its record {path} does not verify: {report.problem}"]
    out = [f"its record {path}: {report.warning}"] if report.warning else []
    header = record.header
    config = header.config
    if header.match_id != g.match_id:
        out.append(f"its record {path} is of match {header.match_id}, not {g.match_id}")
    ruleset = RULESET_NAMES.get(int(config.ruleset), "?")
    for name, rec, stored in (
        ("ruleset", ruleset, g.ruleset),
        ("players", config.players, g.players),
        ("seed", config.seed, g.seed),
    ):
        if rec != stored:
            out.append(f"stored {name} {stored}, but its record says {rec}")
    seated = tuple(s.name for s in config.seats)
    bots = tuple(s.bot for s in g.seats)
    if seated != bots:
        out.append(f"stored seats {', '.join(bots)}, but its record seats {', '.join(seated)}")
    if record.outcome is None:
        out.append(f"stored as {g.ending}, but its record {path} has no outcome (interrupted)")
        return out
    result = record.outcome.result
    ending = _ENDINGS.get(result.ending, "?")
    if ending != g.ending:
        out.append(f"stored as {g.ending}, but its record says {ending}")
    if len(result.seats) != len(g.seats):
        out.append(f"{len(g.seats)} seat results stored, but its record has {len(result.seats)}")
        return out
    for s, r in zip(g.seats, result.seats, strict=True):
        termination = match_pb2.Termination.Name(r.termination).removeprefix("TERMINATION_")
        for name, stored_value, rec_value in (
            ("total", s.total, r.total),
            ("rank", s.rank, r.rank),
            ("termination", s.termination, termination.lower()),
            ("strikes", s.strikes, r.strikes),
        ):
            if stored_value != rec_value:
                out.append(
                    f"seat {s.seat} ({s.bot}): stored {name} {stored_value}, but its record "
                    f"says {rec_value}"
                )
    return out


def orphan_notes(
    results: Sequence[GameRow],
    records: Path | None,
    counts: Mapping[str, int],
    own: Path | None = None,
) -> list[str]:
    """Records in the results' directories and the tournament's ``own`` records directory
    (``records`` alone, when given) that no result names: attempts that were interrupted or
    aborted and given back, their games replayed since or, while some are pending or
    running, maybe not yet (``counts``: the schedule's games by status). A finished one is
    named on its own line: a game played to its end whose result was not kept (its runner
    lost its lease) or was removed.

    ``own`` matters when no result points there: a tournament stopped before its first
    result was stored, or games whose every attempt was given back."""
    named = {Path(g.record_path).name for g in results if g.record_path}
    if records is not None:
        directories = [records]
    else:
        found = sorted({Path(g.record_path).parent for g in results if g.record_path})
        directories = _each_once([*found, *([own] if own is not None else [])])
    out = []
    for directory in directories:
        others = [m for m in catalog.scan(directory) if f"{m.match_id}.jsonl" not in named]
        finished = [m for m in others if m.state is catalog.StoredState.FINISHED]
        for m in finished:
            out.append(
                f"{directory / (m.match_id + '.jsonl')}: a finished match that no stored "
                "result names"
            )
        if len(others) > len(finished):
            states = Counter(m.state.shown for m in others if m not in finished)
            listed = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
            # The store does not say which game an attempt was: while some are still to be
            # played, a given-back game may be one of them.
            fate = (
                "are pending or were replayed"
                if counts.get("pending") or counts.get("running")
                else "were replayed or cancelled"
                if counts.get("cancelled")
                else "were replayed"
            )
            out.append(
                f"{directory}: {listed} record(s) of attempts given back; their games {fate}"
            )
    return out


def _each_once(directories: Sequence[Path]) -> list[Path]:
    """``directories`` without a second name of one already there (a result's absolute
    path, the configuration's relative one), in order."""
    seen: set[Path] = set()
    out = []
    for d in directories:
        key = d.resolve()
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
