"""``replay show``: the board after each turn, or at one step of the replay.

Steps are numbered as the web viewer's replay page numbers them: step N is the board after
N decisions (after the scripted opening, if the record has one), so step 0 is the start.
"""

from __future__ import annotations

from medina.boundary.terminal import printable
from medina.engine import EventKind, GameState, render
from medina.engine.notation import describe_move
from medina.referee.outcome import Termination

from .reader import Record
from .replay import Step, replay, start_state


def move_text(step: Step) -> str:
    """The step's move in the viewer's notation (``brown building F7``, ``tea break``),
    marked when the referee chose it for the seat."""
    g = step.after.rules.geometry
    for event in step.after.events_since(step.before.n_events):
        if event.seat != step.seat:
            continue
        text = describe_move(g, event, marked=True)
        if text is not None and event.kind is not EventKind.PASSED:
            return text
    return "?"


def show_record(record: Record, at: int | None = None) -> str:
    """Text with, per turn, who placed what and the board; with ``at``, only the board at
    step ``at`` (0: the start). Raises ValueError for a step the record does not have."""
    if at is not None and at < 0:
        raise ValueError(f"--at must be 0 or more, got {at}")
    _settings, start = start_state(record)
    steps = list(replay(record))
    if at is not None:
        return _show_step(start, steps, at)
    out: list[str] = []
    turn: list[str] = []
    seat = start.to_move
    state = start
    for step in steps:
        turn.append(move_text(step))
        state = step.after
        ended = state.over or any(
            e.kind is EventKind.TURN_STARTED for e in state.events_since(step.before.n_events)
        )
        if ended:
            out.append(f"seat {seat}: {', '.join(turn)}")
            out.append(render(state))
            out.append("")
            turn = []
            seat = state.to_move
    if record.outcome is not None:
        for r in record.outcome.result.seats:
            ending = Termination(r.termination).name.lower() if r.termination else "?"
            # A record of a server that took any Hello.bot_name may hold a newline or ESC.
            name = printable(r.name)
            out.append(f"rank {r.rank}: seat {r.seat} {name} {r.total} points ({ending})")
    return "\n".join(out)


def _show_step(start: GameState, steps: list[Step], at: int) -> str:
    last = len(steps)
    if at > last:
        raise ValueError(f"the record has no step {at}: its steps are 0 (the start) to {last}")
    if at == 0:
        return f"step 0 of {last} (the start):\n{render(start)}"
    step = steps[at - 1]
    return f"step {at} of {last} (seat {step.seat}: {move_text(step)}):\n{render(step.after)}"
