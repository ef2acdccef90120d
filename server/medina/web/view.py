"""The board as the viewer draws it: plain JSON built from an engine Observation.

Everything here comes from ``observe(state, None)`` (a spectator's view: no supply but the
revealed ones) and the board's scores, unless the caller asks for the full view of a match
that has ended. The browser draws the SVG from this and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from medina.engine import (
    NEUTRAL,
    PALACE_COLOURS,
    ROOFTOP_COLOURS,
    UNCLAIMED,
    ActionKind,
    Event,
    EventKind,
    GameState,
    observe,
    result,
    squares,
)
from medina.engine.geometry import Geometry
from medina.engine.notation import describe_move

JSON = dict[str, Any]

#: Placements shown as "last moves".
LAST_MOVES = 12

_ROOF_NAMES = {
    int(ActionKind.ROOFTOP): "rooftop",
    int(ActionKind.NEUTRAL_ROOFTOP): "neutral rooftop",
    int(ActionKind.BLOCKING_ROOFTOP): "blocking rooftop",
}


def _colours(mask: int) -> list[str]:
    return [PALACE_COLOURS[c] for c in range(4) if (mask >> c) & 1]


def describe_event(g: Geometry, event: Event) -> str | None:
    """One line for a public history entry that a viewer lists, or None to skip it: the
    seat and its move in the engine's notation (``seat 1: rooftop on grey E10``), marked
    when the referee chose it."""
    if event.kind is EventKind.GAME_OVER:
        return "game over"
    text = describe_move(g, event, marked=True)
    if text is None:
        return None
    return f"seat {event.seat}: {text}"


def last_moves(
    g: Geometry, events: Sequence[Event], steps: int, limit: int = LAST_MOVES
) -> list[JSON]:
    """The newest ``limit`` lines of the history, oldest first: ``{"step", "text"}``, the
    step of a decision numbered as the replay numbers it (``steps``: the step of the
    history's last decision), None for a line that is no decision (a pass, the end)."""
    lines: list[JSON] = []
    step = steps
    for event in reversed(events):
        decision = event.kind is EventKind.PLACED or event.kind is EventKind.TEA_SPENT
        text = describe_event(g, event)
        if text is not None:
            lines.append({"step": step if decision else None, "text": text})
            if len(lines) == limit:
                break
        if decision:
            step -= 1
    return lines[::-1]


def last_move(g: Geometry, events: Sequence[Event]) -> JSON | None:
    """The newest decision (a placement or a tea break) for the board to mark: its seat,
    text, square (None for tea) and the squares its seat placed on earlier in the same
    turn; None before the first."""
    found: Event | None = None
    turn: list[int] = []
    for event in reversed(events):
        if found is None:
            if event.kind is EventKind.PLACED or event.kind is EventKind.TEA_SPENT:
                found = event
            continue
        if event.kind is EventKind.TURN_STARTED or (
            event.kind in (EventKind.PLACED, EventKind.TEA_SPENT) and event.seat != found.seat
        ):
            break
        if event.kind is EventKind.PLACED:
            turn.append(event.square)
    if found is None:
        return None
    return {
        "seat": found.seat,
        "text": describe_move(g, found),
        "square": found.square if found.kind is EventKind.PLACED else None,
        "turn": turn[::-1],
        "by_referee": found.by_referee,
    }


def _supply(supply: Any) -> JSON | None:
    if supply is None:
        return None
    return {
        "buildings": dict(zip(PALACE_COLOURS, supply.buildings, strict=True)),
        "rooftops": supply.rooftops.bit_count(),
        "neutral": supply.neutral,
        "blocking": supply.blocking.bit_count(),
        "stables": supply.stables,
        "merchants": supply.merchants,
        "walls": supply.walls,
        "total": supply.total,
    }


def board_view(
    state: GameState,
    *,
    names: Sequence[str] = (),
    full: bool = False,
    history: int = LAST_MOVES,
    start: int = 0,
) -> JSON:
    """The JSON the pages draw: the public view of ``state`` (``full``: every supply, for a
    match that has ended; ``start``: the decisions of the game's step 0, a scripted
    opening's, which the steps of the last moves do not count)."""
    obs = observe(state, None, full=full)
    rules = state.rules
    g = rules.geometry
    scores = result(state)
    walled = obs.walls | g.tower_mask
    gates = g.wall_spaces & ~obs.walls & g.at_least_two_adjacent(walled)
    pieces = {
        "buildings": sum(m.bit_count() for m in obs.buildings),
        "stables": obs.stables.bit_count(),
        "walls": obs.walls.bit_count(),
        "merchants": obs.merchants.bit_count(),
        "rooftops": sum(1 for p in obs.palaces if p.roof),
    }
    palaces: list[JSON] = []
    for p in obs.palaces:
        if p.owner == NEUTRAL:
            roof_colour = ROOFTOP_COLOURS[rules.neutral_colour]
        elif p.owner == UNCLAIMED:
            roof_colour = None
        elif p.roof == ActionKind.BLOCKING_ROOFTOP:
            roof_colour = ROOFTOP_COLOURS[rules.blocking_colours[p.owner]]
        else:
            roof_colour = ROOFTOP_COLOURS[rules.rooftop_colours[p.owner]]
        palaces.append(
            {
                "colour": PALACE_COLOURS[p.colour],
                "buildings": squares(p.buildings),
                "stables": squares(p.stables),
                "owner": p.owner if p.owner >= 0 else None,
                "neutral": p.owner == NEUTRAL,
                "roof": _ROOF_NAMES.get(p.roof),
                "roof_square": p.roof_square if p.roof else None,
                "roof_colour": roof_colour,
            }
        )
    seats: list[JSON] = []
    for view in obs.seats:
        seat = view.seat
        b = scores.breakdowns[seat]
        seats.append(
            {
                "seat": seat,
                "name": names[seat] if seat < len(names) and names[seat] else f"seat {seat}",
                "colour": ROOFTOP_COLOURS[view.rooftop_colour],
                "blocking_colour": ROOFTOP_COLOURS[view.blocking_colour]
                if view.blocking_colour >= 0
                else None,
                "score": scores.totals[seat],
                "rank": scores.ranks[seat],
                "breakdown": {
                    "buildings": b.buildings,
                    "stables": b.stables,
                    "walls": b.walls,
                    "merchants": b.merchants,
                    "well": b.well_bonus,
                    "palace_tiles": b.palace_tiles,
                    "tower_tiles": b.tower_tiles,
                },
                "rooftops": _colours(view.rooftops),
                "blocking": _colours(view.blocking),
                "neutral": view.neutral,
                "tea": view.tea,
                "out_of_pieces": view.out_of_pieces,
                "revealed": view.revealed,
                "supply": _supply(view.supply),
            }
        )
    return {
        "ruleset": obs.ruleset,
        "players": obs.players,
        "cols": obs.cols,
        "rows": obs.rows,
        "phase": obs.phase.name.lower(),
        "to_move": obs.to_move,
        "turn": obs.turn,
        "quota": obs.quota,
        "placed": obs.placed,
        "decisions": state.decisions,
        "full": full,
        "towers": list(g.towers),
        "wall_spaces": squares(g.wall_spaces),
        "walls": squares(obs.walls),
        "gates": squares(gates),
        "merchants": squares(obs.merchants),
        "street": squares(obs.street),
        "well": obs.well,
        "well_bonus": squares(state.well_bonus) if obs.well >= 0 else [],
        "palaces": palaces,
        "palace_tiles": [
            {"colour": PALACE_COLOURS[c], "holder": h if h >= 0 else None}
            for c, h in enumerate(obs.palace_tiles)
        ],
        "tower_tiles": [
            {"tower": t + 1, "holder": h if h >= 0 else None, "merchants": m}
            for t, (h, m) in enumerate(zip(obs.tower_tiles, obs.tower_merchants, strict=True))
        ],
        "tea_pool": obs.tea_pool,
        "exhausted": _colours(obs.exhausted),
        "pieces": pieces,
        "seats": seats,
        "last_moves": last_moves(g, obs.events, state.decisions - start, history),
        "last": last_move(g, obs.events),
    }
