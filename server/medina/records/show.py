"""``replay show``: the board after each turn (or after one chosen decision)."""

from __future__ import annotations

from medina.engine import EventKind, render
from medina.referee.outcome import Termination

from .reader import Record
from .replay import describe, replay, start_state


def show_record(record: Record, at: int | None = None) -> str:
    """Text with, per turn, who placed what and the board; with ``at``, only the board after
    decision ``at`` (0-based). Raises ValueError for an ``at`` beyond the record."""
    _settings, state = start_state(record)
    out: list[str] = []
    turn: list[str] = []
    seat = state.to_move
    if at is not None and at < 0:
        raise ValueError(f"--at must be 0 or more, got {at}")
    for step in replay(record):
        turn.append(describe(step.before, step.action))
        state = step.after
        if at is not None:
            if step.index == at:
                return f"after decision {at} (seat {step.seat}: {turn[-1]}):\n{render(state)}"
            continue
        ended = state.over or any(
            e.kind is EventKind.TURN_STARTED for e in state.events_since(step.before.n_events)
        )
        if ended:
            out.append(f"seat {seat}: {', '.join(turn)}")
            out.append(render(state))
            out.append("")
            turn = []
            seat = state.to_move
    if at is not None:
        raise ValueError(f"the record has no decision {at} (it has {state.decisions})")
    if record.outcome is not None:
        for r in record.outcome.result.seats:
            ending = Termination(r.termination).name.lower() if r.termination else "?"
            out.append(f"rank {r.rank}: seat {r.seat} {r.name} {r.total} points ({ending})")
    return "\n".join(out)
