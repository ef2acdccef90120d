"""Applying an action: validation with reasons, placement, turn ends, passes and game end."""

from __future__ import annotations

from .board import empty_city
from .errors import IllegalActionError
from .geometry import Square
from .movegen import LegalMoves, decide, legal_moves, placements
from .notation import a_or_an, square_name
from .rules.buildings import place_building, why_not_building
from .rules.merchants import place_merchant, why_not_merchant
from .rules.rooftops import canonical_square, place_rooftop, why_not_rooftop
from .rules.stables import place_stable, why_not_stable
from .rules.walls import arm_of, why_not_wall
from .state import MERCHANTS, SLOTS, STABLES, WALLS, GameState, Phase
from .tiles import contact_after_wall, update_palace_tiles
from .types import ROOF_KINDS, Action, ActionKind, Event, EventKind
from .variants import PALACE_COLOURS, ROOFTOP_COLOURS

_SUPPLY_NAMES = {
    ActionKind.STABLE: (STABLES, "stable"),
    ActionKind.MERCHANT: (MERCHANTS, "merchant"),
    ActionKind.WALL: (WALLS, "wall"),
}


def is_legal(s: GameState, a: Action) -> bool:
    """Whether ``a`` is legal now (a rooftop may name any building of its palace)."""
    kind = a.kind
    if not isinstance(kind, ActionKind):
        return False  # a bare int would pass the masks yet miss every ``is`` test when placed
    if isinstance(a.square, bool) or isinstance(a.colour, bool):
        return False  # an int to Python (True is colour 1), never a square or a colour
    moves = legal_moves(s)
    if kind is ActionKind.TEA:
        return moves.tea
    if not 0 <= a.square < s.rules.geometry.size:
        return False
    sq = canonical_square(s, a.square) if kind in ROOF_KINDS else a.square
    return bool((moves.mask(kind, a.colour) >> sq) & 1)


def apply_action(s: GameState, a: Action, *, by_referee: bool = False) -> GameState:
    """The state after ``a``; ``s`` is left untouched.

    ``by_referee`` marks the history entry of an action the referee chose for the seat (a
    timeout's random action, a forfeited seat played on): a public fact, as at the table.
    Raises IllegalActionError naming the broken rule when ``a`` is not legal.
    """
    if not is_legal(s, a):
        raise explain(s, a)
    t = s.copy()
    t.decisions += 1
    seat = t.to_move
    kind = a.kind
    if kind is ActionKind.TEA:
        t.tea[seat] -= 1
        t.emit(Event(EventKind.TEA_SPENT, seat=seat, by_referee=by_referee))
        _end_turn(t)
        return t
    if kind is ActionKind.START_MERCHANT:
        t.merchants |= 1 << a.square
        t.street = 1 << a.square
        t.emit(
            Event(
                EventKind.PLACED, seat=seat, piece=int(kind), square=a.square, by_referee=by_referee
            )
        )
        t.phase = Phase.PLACING
        if t.rules.two_colour_roofs:
            _end_turn(t)  # [v1-2p] the start merchant is the whole opening turn
        else:
            _begin_turn(t, seat, placements(t, seat))
        return t
    t.ply += 1
    # The placement is announced before its consequences (tiles, tea, removals).
    t.emit(
        Event(
            EventKind.PLACED,
            seat=seat,
            piece=int(kind),
            square=a.square,
            colour=_colour_of(t, a),
            by_referee=by_referee,
        )
    )
    _place(t, seat, a)
    if kind in ROOF_KINDS or kind is ActionKind.STABLE:
        update_palace_tiles(t)  # only claims and stables change a competing palace
    t.placed += 1
    if kind is ActionKind.BUILDING:
        t.turn_colours |= 1 << a.colour
    elif kind in ROOF_KINDS:
        t.turn_roofs |= 1 << kind
    if t.placed < t.quota:
        moves = placements(t, seat, t.turn_colours, t.turn_roofs)
        if moves.has_placement():
            t.legal_cache = decide(t, moves)
            return t
    _end_turn(t)
    return t


def _colour_of(s: GameState, a: Action) -> int:
    """The palace colour a placement involves: the building's, or the roofed palace's."""
    if a.kind is ActionKind.BUILDING:
        return a.colour
    if a.kind in ROOF_KINDS:
        p = s.palace_at(a.square)
        return p.colour if p is not None else -1
    return -1


def _place(t: GameState, seat: int, a: Action) -> int:
    """Put the piece on the board; returns the palace colour involved (or -1)."""
    kind = a.kind
    sq = a.square
    if kind is ActionKind.BUILDING:
        t.supply[seat * SLOTS + a.colour] -= 1
        place_building(t, a.colour, sq)
        return a.colour
    if kind in ROOF_KINDS:
        return place_rooftop(t, seat, kind, sq)
    slot = _SUPPLY_NAMES[kind][0]
    t.supply[seat * SLOTS + slot] -= 1
    if kind is ActionKind.WALL:
        tower = arm_of(t, sq)
        t.walls |= 1 << sq
        t.arms[tower] |= 1 << sq
        contact_after_wall(t, tower, sq)
    elif kind is ActionKind.STABLE:
        place_stable(t, sq)
    else:
        place_merchant(t, sq)
    return -1


def _end_turn(t: GameState) -> None:
    """Hand the turn on: seats with no legal placement pass; nobody able ends the game."""
    n = t.players
    prev = t.to_move
    for k in range(1, n + 1):
        seat = (prev + k) % n
        moves = placements(t, seat)
        if moves.has_placement():
            for j in range(1, k):
                t.emit(Event(EventKind.PASSED, seat=(prev + j) % n))
                t.turn += 1
            _begin_turn(t, seat, moves)
            return
    t.phase = Phase.OVER
    t.legal_cache = None
    t.emit(Event(EventKind.GAME_OVER))


def _begin_turn(t: GameState, seat: int, moves: LegalMoves) -> None:
    t.to_move = seat
    t.quota = t.rules.quota(t.turn)
    t.turn += 1
    t.placed = 0
    t.turn_colours = 0
    t.turn_roofs = 0
    t.emit(Event(EventKind.TURN_STARTED, seat=seat, count=t.quota))
    if t.rules.per_turn_limits and not (t.revealed >> seat) & 1:
        _reveal_if_running_low(t, seat)
    t.legal_cache = decide(t, moves)


def _reveal_if_running_low(t: GameState, seat: int) -> None:
    """[v1-2p] A player who cannot fill his quota under the colour limits shows his supply."""
    sup = t.supply_of(seat)
    most = (
        sum(1 for b in sup.buildings if b)
        + (1 if sup.rooftops else 0)
        + (1 if sup.blocking else 0)
        + sup.stables
        + sup.merchants
        + sup.walls
    )
    if most < t.quota:
        t.revealed |= 1 << seat
        t.emit(Event(EventKind.SUPPLY_REVEALED, seat=seat, supply=sup))


def explain(s: GameState, a: Action) -> IllegalActionError:
    """Why ``a`` is illegal now, in words a bot author understands."""
    g = s.rules.geometry
    rules = s.rules
    kind = a.kind
    if s.phase is Phase.OVER:
        return IllegalActionError("game-over", "the game is over")
    if not isinstance(kind, ActionKind):
        known = {int(k): k for k in ActionKind}.get(kind) if isinstance(kind, int) else None
        hint = f": use ActionKind.{known.name}" if known is not None else ""
        return IllegalActionError("bad-action", f"action kind {kind!r} is not an ActionKind{hint}")
    for field, value in (("square", a.square), ("colour", a.colour)):
        if isinstance(value, bool):
            return IllegalActionError("bad-action", f"the {field} is {value!r}, not an int")
    if s.phase is Phase.START_MERCHANT and kind is not ActionKind.START_MERCHANT:
        return IllegalActionError(
            "start-merchant",
            "the game opens with the start merchant: place it on an empty inner-city square",
        )
    if kind is ActionKind.START_MERCHANT and s.phase is not Phase.START_MERCHANT:
        why = "this ruleset has none" if not rules.start_merchant_decision else "it is placed"
        return IllegalActionError("start-merchant", f"no start merchant to place: {why}")
    if kind is ActionKind.TEA:
        return _why_not_tea(s)
    if not 0 <= a.square < g.size:
        return IllegalActionError(
            "bad-square", f"square {a.square} is off the board (0..{g.size - 1})"
        )
    name = square_name(g, a.square)
    bit = 1 << a.square
    seat = s.to_move
    if kind is ActionKind.BUILDING and not 0 <= a.colour < 4:
        return IllegalActionError("bad-colour", f"building colour {a.colour} is not 0..3")
    supply_error = _why_not_supply(s, seat, a)
    if supply_error is not None:
        return supply_error
    raw = placements(s, seat, s.turn_colours, s.turn_roofs)
    sq = canonical_square(s, a.square) if kind in ROOF_KINDS else a.square
    if (raw.mask(kind, a.colour) >> sq) & 1:
        return IllegalActionError(
            "forced-rooftop",
            f"you must place a rooftop, not a piece at {name}: no other player has a rooftop "
            "left, and this is the last placement of your turn",
        )
    if kind in ROOF_KINDS:
        return why_not_rooftop(s, seat, kind, a.square)
    if kind is ActionKind.WALL:
        return why_not_wall(s, a.square)
    if not g.city & bit:
        return IllegalActionError(
            "city-square", f"only walls go on the wall ring; {name} is not a city square"
        )
    empty = empty_city(s)
    if not empty & bit:
        return IllegalActionError("occupied", f"{name} is not empty")
    if kind is ActionKind.START_MERCHANT:
        return IllegalActionError(
            "start-merchant",
            f"the start merchant goes on an inner-city square; {name} is on the edge ring",
        )
    if kind is ActionKind.BUILDING:
        return why_not_building(s, a.colour, a.square, empty)
    if kind is ActionKind.STABLE:
        return why_not_stable(s, a.square)
    return why_not_merchant(s, a.square, empty)


def _why_not_tea(s: GameState) -> IllegalActionError:
    seat = s.to_move
    if not s.rules.tea:
        return IllegalActionError("no-tea", f"{s.rules.name} has no tea tiles")
    if not s.tea[seat]:
        return IllegalActionError("no-tea", "you hold no tea tile")
    if s.placed == 0:
        return IllegalActionError(
            "tea-timing", "a tea break needs at least one placement first in this turn"
        )
    return IllegalActionError("tea-timing", "a tea break is not allowed now")


def _why_not_supply(s: GameState, seat: int, a: Action) -> IllegalActionError | None:
    base = seat * SLOTS
    kind = a.kind
    limits = s.rules.per_turn_limits
    if kind is ActionKind.BUILDING:
        colour = PALACE_COLOURS[a.colour]
        if (s.exhausted >> a.colour) & 1:
            return IllegalActionError(
                "no-supply", f"{colour} buildings left the game: every {colour} claim is made"
            )
        if not s.supply[base + a.colour]:
            return IllegalActionError("no-supply", f"you have no {colour} building left")
        if limits and (s.turn_colours >> a.colour) & 1:
            return IllegalActionError(
                "turn-limit",
                f"you already placed {a_or_an(colour)} building this turn (one per colour)",
            )
    elif kind in _SUPPLY_NAMES:
        slot, what = _SUPPLY_NAMES[kind]
        if not s.supply[base + slot]:
            return IllegalActionError("no-supply", f"you have no {what} left")
    elif kind in (ActionKind.ROOFTOP, ActionKind.BLOCKING_ROOFTOP):
        left = s.roofs[seat] if kind is ActionKind.ROOFTOP else s.blocking[seat]
        what = "rooftop" if kind is ActionKind.ROOFTOP else "blocking rooftop"
        if kind is ActionKind.BLOCKING_ROOFTOP and not s.rules.two_colour_roofs:
            return None
        if not left:
            return IllegalActionError("no-supply", f"you have no {what} left")
        if limits and (s.turn_roofs >> kind) & 1:
            own = (
                s.rules.rooftop_colours if kind is ActionKind.ROOFTOP else s.rules.blocking_colours
            )
            return IllegalActionError(
                "turn-limit",
                f"you already placed your {ROOFTOP_COLOURS[own[seat]]} {what} this turn "
                "(one rooftop of each of your two colours per turn)",
            )
    return None


def square_label(s: GameState, sq: Square) -> str:
    """A1 name of ``sq`` on this state's board."""
    return square_name(s.rules.geometry, sq)
