"""Rebuilding a GameState from an Observation: the inverse of ``observe``, for search bots.

Everything public comes straight from the observation; what ``observe`` leaves
out is derived as the table would derive it:

* **Palaces** keep their ids, rooftops, tower contacts and tie-break times; their
  zones and reaches follow from the board.
* **Tower arms**: each arm is walked from its tower along the ring while walls
  run on (arms never meet: every side keeps its gate).
* **Placements made** (palace-tile timing) follow from the board: every
  placement put one piece on it or claimed one palace.
* **The current turn's colours and rooftops** ([v1-2p] limits, [v1] forced
  rooftop) come from the history since the turn's ``TURN_STARTED`` event (or
  from as much of the turn as the observation's events cover).
* **Supplies**: a supply the viewer may see is used exactly. Another seat's
  comes from ``supplies`` when given, else is deduced from the whole public
  history when the observation carries it (``first_event == 0``), else is the
  starting components (less exhausted colours; nothing when it is out of
  pieces). Rooftops are public and always come from the seat views.

The rebuilt history is the observation's events (``n_events`` counts only
those), and the seed is unknown (0): neither affects the rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .errors import EngineError
from .geometry import Geometry, Mask
from .observe import Observation, PalaceView
from .setup import empty_state, put_well
from .state import MERCHANTS, SLOTS, STABLES, WALLS, GameState, Phase
from .types import NEUTRAL, ROOF_KINDS, ActionKind, Event, EventKind, Palace, Supply
from .variants import PURPLE, Ruleset, get_ruleset

__all__ = ["ViewError", "state_from_observation"]

_TEA_FOR_CLAIM = (3, 2, 1)


class ViewError(EngineError):
    """An observation that no game state could have produced."""


def state_from_observation(
    obs: Observation, *, supplies: Mapping[int, Supply] | None = None
) -> GameState:
    """A GameState that ``observe`` would show as ``obs`` (see the module docstring).

    From a full view with the whole history (``observe(s, None, full=True)``)
    the result has the same legal actions, scores and board as ``s``, and stays
    so under the same actions. From a seat's own view with the whole history the
    other seats' supplies are deduced exactly as well. ``supplies`` (seat ->
    Supply) fills in supplies the observation does not show, for example a
    search bot's guess; its rooftop fields are ignored (rooftops are public).
    Raises ViewError for an inconsistent observation.
    """
    rules = get_ruleset(obs.ruleset, obs.players)
    g = rules.geometry
    _check_shape(obs, rules, supplies)
    s = empty_state(rules, 0, _start_seat(obs))
    s.buildings = list(obs.buildings)
    s.stables = obs.stables
    s.merchants = obs.merchants
    s.walls = obs.walls
    s.street = obs.street
    if obs.well >= 0:
        put_well(s, obs.well)
    s.arms = tower_arms(g, obs.walls)
    s.palaces = [_palace(g, i, v) for i, v in enumerate(obs.palaces)]
    s.next_pid = len(s.palaces)
    _put_tiles_and_rooftops(s, obs)
    _put_supplies(s, obs, supplies or {})
    s.phase = obs.phase
    s.to_move = obs.to_move
    s.turn = obs.turn
    s.quota = obs.quota
    s.placed = obs.placed
    s.turn_colours, s.turn_roofs = _turn_usage(obs)
    s.ply = placements_made(s)
    s.decisions = s.ply + _tea_breaks(s, obs)
    if rules.start_merchant_decision and obs.phase is not Phase.START_MERCHANT:
        s.decisions += 1
    s._events = list(obs.events)
    s.n_events = len(obs.events)
    return s


def _put_tiles_and_rooftops(s: GameState, obs: Observation) -> None:
    """The public facts: rooftops, tea, revealed supplies, tiles, exhausted colours."""
    for view in obs.seats:
        s.roofs[view.seat] = view.rooftops
        s.blocking[view.seat] = view.blocking
        s.tea[view.seat] = view.tea
        if view.revealed:
            s.revealed |= 1 << view.seat
    s.tea_pool = obs.tea_pool
    if s.rules.tea:
        s.purple_claims = sum(1 for p in s.palaces if p.claimed and p.colour == PURPLE)
    s.palace_tiles = list(obs.palace_tiles)
    s.tower_tiles = list(obs.tower_tiles)
    s.tower_merchants = list(obs.tower_merchants)
    s.exhausted = obs.exhausted


def _check_shape(obs: Observation, rules: Ruleset, supplies: Mapping[int, Supply] | None) -> None:
    g = rules.geometry
    if (obs.cols, obs.rows) != (g.cols, g.rows):
        raise ViewError(
            f"observation board is {obs.cols}x{obs.rows}, but {rules.name} with "
            f"{rules.players} players is played on {g.cols}x{g.rows}"
        )
    if [v.seat for v in obs.seats] != list(range(rules.players)):
        raise ViewError(f"observation needs one seat view per seat 0..{rules.players - 1}")
    if not 0 <= obs.to_move < rules.players:
        raise ViewError(f"seat to move {obs.to_move} is not a seat")
    for seat in supplies or {}:
        if not 0 <= seat < rules.players:
            raise ViewError(f"supply given for seat {seat}, not a seat")
    if obs.walls & ~g.wall_spaces:
        raise ViewError("observation has walls off the wall spaces")


def _start_seat(obs: Observation) -> int:
    """Seats move in order, passes included, so turn ``k`` (0-based) is the start seat's + k."""
    return (obs.to_move - max(obs.turn - 1, 0)) % obs.players


def tower_arms(g: Geometry, walls: Mask) -> list[Mask]:
    """Walls per tower index: each arm walked from its tower while the walls run on."""
    arms = [0, 0, 0, 0]
    for t, tower in enumerate(g.towers):
        row, col = g.row_col(tower)
        for dr, dc in ((0, 1 if col == 0 else -1), (1 if row == 0 else -1, 0)):
            r, c = row + dr, col + dc
            while 0 <= r < g.rows and 0 <= c < g.cols and (walls >> g.square(r, c)) & 1:
                arms[t] |= 1 << g.square(r, c)
                r, c = r + dr, c + dc
    if walls & ~(arms[0] | arms[1] | arms[2] | arms[3]):
        raise ViewError("observation has a wall not connected to any tower")
    return arms


def _palace(g: Geometry, pid: int, v: PalaceView) -> Palace:
    if not 0 <= v.colour < 4 or not v.buildings or v.buildings & v.stables:
        raise ViewError(f"palace {pid} is malformed (colour {v.colour}, no or shared squares)")
    return Palace(
        pid=pid,
        colour=v.colour,
        buildings=v.buildings,
        stables=v.stables,
        zone=g.touch(v.buildings | v.stables),
        reach=g.adj(v.buildings),
        owner=v.owner,
        roof=v.roof,
        roof_square=v.roof_square,
        time=v.time,
        towers=v.towers,
    )


def placements_made(s: GameState) -> int:
    """Placements so far: one per piece on the board (the start merchant is no
    placement) plus one per claimed palace."""
    b = s.buildings
    pieces = (b[0] | b[1] | b[2] | b[3] | s.stables | s.walls).bit_count()
    merchants = s.merchants.bit_count()
    claims = sum(1 for p in s.palaces if p.claimed)
    return pieces + max(merchants - 1, 0) + claims


def _turn_usage(obs: Observation) -> tuple[int, int]:
    """(building colours, rooftop kinds) placed in the current turn, from its history
    (only the part the observation carries when its ``TURN_STARTED`` is cut off)."""
    colours = roofs = 0
    for e in reversed(obs.events):
        if e.kind is EventKind.TURN_STARTED:
            return colours, roofs
        if e.kind is EventKind.PLACED and e.seat == obs.to_move:
            if e.piece == ActionKind.BUILDING:
                colours |= 1 << e.colour
            elif e.piece in ROOF_KINDS:
                roofs |= 1 << e.piece
    return colours, roofs


def _tea_breaks(s: GameState, obs: Observation) -> int:
    """Tea breaks taken: counted in the history, else tea handed to seats minus tea held
    (claims in order of their palace times, which is exact unless stables came later)."""
    if not s.rules.tea:
        return 0
    if obs.first_event == 0:
        return sum(1 for e in obs.events if e.kind is EventKind.TEA_SPENT)
    purple = sorted((p for p in s.palaces if p.claimed and p.colour == PURPLE), key=_time)
    handed = sum(_TEA_FOR_CLAIM[i] for i, p in enumerate(purple[:3]) if p.owner != NEUTRAL)
    return max(handed - sum(s.tea), 0)


def _time(p: Palace) -> int:
    return p.time


def _put_supplies(s: GameState, obs: Observation, given: Mapping[int, Supply]) -> None:
    """Every seat's supply: shown, given, deduced from the history, or the starting one."""
    deduced = _deduce(s, obs.events) if obs.first_event == 0 else None
    for view in obs.seats:
        seat = view.seat
        base = seat * SLOTS
        sup = view.supply if view.supply is not None else given.get(seat)
        if sup is not None:
            counts = [*sup.buildings, sup.stables, sup.merchants, sup.walls]
        elif view.out_of_pieces:
            counts = [0] * 7
        else:
            counts = deduced[seat] if deduced is not None else s.supply[base : base + WALLS + 1]
            for colour in range(4):
                if (obs.exhausted >> colour) & 1:
                    counts[colour] = 0
        if min(counts) < 0:
            raise ViewError(f"seat {seat} would hold a negative number of pieces: {counts}")
        s.supply[base : base + WALLS + 1] = counts
        s.supply[base + SLOTS - 1] = view.neutral  # NEUTRALS: public


def _deduce(s: GameState, events: Sequence[Event]) -> list[list[int]]:
    """Per seat [4 building counts, stables, merchants, walls] after the whole history."""
    start = s.supply
    counts = [start[seat * SLOTS : seat * SLOTS + WALLS + 1] for seat in range(s.players)]
    slots = {ActionKind.STABLE: STABLES, ActionKind.MERCHANT: MERCHANTS, ActionKind.WALL: WALLS}
    for e in events:
        kind = e.kind
        if kind is EventKind.PLACED:
            if e.piece == ActionKind.BUILDING:
                counts[e.seat][e.colour] -= 1
            elif e.piece in slots:
                counts[e.seat][slots[ActionKind(e.piece)]] -= 1
        elif kind is EventKind.TOWER_MERCHANTS and e.target >= 0:
            counts[e.target][MERCHANTS] += e.count
        elif kind is EventKind.COLOUR_EXHAUSTED:
            for c in counts:
                c[e.colour] = 0
    return counts
