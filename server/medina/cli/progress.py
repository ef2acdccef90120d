"""Human-readable progress lines and the final scoreboard."""

from __future__ import annotations

import sys

from medina.boundary.terminal import printable
from medina.engine import ROOFTOP_COLOURS, Event, EventKind, GameState, result
from medina.engine.notation import describe_move
from medina.referee.outcome import MatchOutcome, Termination


class Progress:
    """Prints one line per turn from the public events, fed from event 0 on.

    A turn's line collects its placements and tea break. The medina-v1 start merchant is
    a decision of its own before the first turn (3-4 players), printed as a ``start`` line,
    or the whole first turn (2 players).
    """

    def __init__(self, state: GameState, quiet: bool = False) -> None:
        self.state = state
        self.quiet = quiet
        self.seat = -1
        self.in_turn = False  # the collected actions belong to a started turn
        self.parts: list[str] = []
        self.turns = 0

    def event(self, event: Event) -> None:
        """Feed one public event (before applying its action to ``state``)."""
        if event.kind is EventKind.TURN_STARTED or event.kind is EventKind.GAME_OVER:
            self.flush()
            self.seat = event.seat
            self.in_turn = event.kind is EventKind.TURN_STARTED
        elif event.kind is EventKind.PLACED or event.kind is EventKind.TEA_SPENT:
            if event.seat != self.seat:  # a decision outside a turn: the v1 start merchant
                self.flush()
                self.seat = event.seat
                self.in_turn = False
            # As the viewer's pages and `replay show` write it, the referee's moves marked.
            move = describe_move(self.state.rules.geometry, event, marked=True)
            assert move is not None  # a placement or a tea break
            self.parts.append(move)
        elif event.kind is EventKind.PASSED:
            self._print(f"        seat {event.seat} passes")

    def flush(self) -> None:
        """Print the turn (or the decision outside a turn) collected so far."""
        if self.seat >= 0 and self.parts:
            if self.in_turn:
                self.turns += 1
                label = f"turn {self.turns:3d}"
            else:
                label = "start   "
            scores = " ".join(f"{t:3d}" for t in result(self.state).totals)
            line = f"{label}  seat {self.seat}: {', '.join(self.parts)}"
            self._print(f"{line:<64} score {scores}")
        self.parts = []

    def _print(self, line: str) -> None:
        if not self.quiet:
            print(line, file=sys.stdout, flush=True)


def scoreboard(state: GameState, outcome: MatchOutcome) -> str:
    """The final table: rank, seat, name, total, breakdown, termination."""
    lines = ["rank  seat  name                  total  bld stb wal mer well ptile ttile  ending"]
    order = sorted(outcome.seats, key=lambda s: (s.rank, s.seat))
    for s in order:
        b = s.breakdown
        colour = ROOFTOP_COLOURS[state.rules.rooftop_colours[s.seat]]
        ending = s.termination.name.lower()
        if s.termination is not Termination.NORMAL and s.detail:
            ending += f" ({printable(s.detail)})"
        # Names from records of servers that took any Hello.bot_name are shown escaped.
        name = printable(s.name)
        lines.append(
            f"{s.rank:>4}  {s.seat:>4}  {(name + ' ' + colour)[:20]:<20}  {s.total:>5}  "
            f"{b.buildings:>3} {b.stables:>3} {b.walls:>3} {b.merchants:>3} {b.well_bonus:>4} "
            f"{b.palace_tiles:>5} {b.tower_tiles:>5}  {ending}"
        )
    if outcome.abandoned:
        lines.append("(match abandoned: no seat's bot ever connected; nothing was played)")
    elif not outcome.complete:
        lines.append("(match aborted: scores are those on the board when it stopped)")
    return "\n".join(lines)
