"""What a seat (or a spectator, or a record) may see of a game (docs/rules.md section 9).

The view is built from an allow-list of public facts plus, for a seat, its own
supply; the full view (``seat=None, full=True``) adds every supply and is for
records after the match and the server's own use.
"""

from __future__ import annotations

from dataclasses import dataclass

from .geometry import Mask
from .memo import IdentityMemo
from .scoring import Breakdown, breakdowns
from .state import GameState, Phase
from .types import Event, Palace, Supply


@dataclass(frozen=True, slots=True)
class PalaceView:
    """A palace as everyone sees it."""

    colour: int
    buildings: Mask
    stables: Mask
    owner: int  # seat, NEUTRAL (-2) or UNCLAIMED (-1)
    roof: int  # ActionKind of the rooftop, 0 while unclaimed
    roof_square: int
    towers: int = 0  # bit t: tower index t contacted
    time: int = 0  # placement number of the later of its claim and its last stable


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Public facts about one seat, plus its supply when the viewer may see it."""

    seat: int
    rooftop_colour: int
    blocking_colour: int  # [v1-2p], else -1
    rooftops: int  # mask of palace colours still claimable (rooftops are public)
    blocking: int
    neutral: int
    tea: int
    out_of_pieces: bool
    revealed: bool  # [v1-2p] supply shown after running low
    supply: Supply | None  # own seat, revealed, or full view; else None
    #: Its score if the game ended now. Scoring reads public facts only (palaces, walls,
    #: merchants, the well, tiles held), so every viewer may see every seat's.
    score: Breakdown | None = None


@dataclass(frozen=True, slots=True)
class Observation:
    """One viewer's picture of the game."""

    ruleset: str
    players: int
    viewer: int  # seat, or -1 for a spectator / full view
    cols: int
    rows: int
    phase: Phase
    to_move: int
    turn: int
    quota: int
    placed: int
    buildings: tuple[Mask, Mask, Mask, Mask]
    stables: Mask
    merchants: Mask
    street: Mask
    walls: Mask
    well: int
    palaces: tuple[PalaceView, ...]
    palace_tiles: tuple[int, ...]
    tower_tiles: tuple[int, ...]
    tower_merchants: tuple[int, ...]
    tea_pool: int
    exhausted: int
    seats: tuple[PlayerView, ...]
    events: tuple[Event, ...]  # the public history from ``first_event`` on
    first_event: int


#: id(palace) -> its view: a palace lives on, unchanged, through many observations
_VIEWS: IdentityMemo[PalaceView] = IdentityMemo()


#: id(the state's palaces) -> their views: states share their palaces until one changes
_ALL_VIEWS: IdentityMemo[tuple[PalaceView, ...]] = IdentityMemo()


def _palace_views(palaces: tuple[Palace, ...]) -> tuple[PalaceView, ...]:
    """What everyone sees of ``palaces`` (the same tuple while they are shared)."""
    views = _ALL_VIEWS.get(id(palaces))
    if views is None:
        views = _ALL_VIEWS.put(id(palaces), palaces, tuple([_palace_view(p) for p in palaces]))
    return views


def _palace_view(p: Palace) -> PalaceView:
    """What everyone sees of ``p`` (the same view object while ``p`` lives on)."""
    view = _VIEWS.get(id(p))
    if view is None:
        view = _VIEWS.put(
            id(p),
            p,
            PalaceView(
                p.colour, p.buildings, p.stables, p.owner, p.roof, p.roof_square, p.towers, p.time
            ),
        )
    return view


def observe(
    s: GameState,
    seat: int | None,
    *,
    full: bool = False,
    since: int = 0,
    known: GameState | None = None,
) -> Observation:
    """The view of ``seat`` (None: a spectator; ``full``: every supply).

    ``since`` limits the history to events from that index on (a bot that
    tracks the game needs only the new ones). ``known``: a state observed before (the last
    one, say), whose scores are reused where nothing changed them (``scoring.breakdowns``).
    """
    rules = s.rules
    viewer = -1 if seat is None else seat
    views = []
    scores = breakdowns(s, known)
    for p in range(rules.players):
        revealed = bool((s.revealed >> p) & 1)
        visible = full or p == seat or revealed
        views.append(
            PlayerView(
                seat=p,
                rooftop_colour=rules.rooftop_colours[p],
                blocking_colour=rules.blocking_colours[p] if rules.two_colour_roofs else -1,
                rooftops=s.roofs[p],
                blocking=s.blocking[p],
                neutral=s.supply[p * 8 + 7],
                tea=s.tea[p],
                out_of_pieces=s.pieces_left(p) == 0,
                revealed=revealed,
                supply=s.supply_of(p) if visible else None,
                score=scores[p],
            )
        )
    return Observation(
        ruleset=rules.name,
        players=rules.players,
        viewer=viewer,
        cols=rules.geometry.cols,
        rows=rules.geometry.rows,
        phase=s.phase,
        to_move=s.to_move,
        turn=s.turn,
        quota=s.quota,
        placed=s.placed,
        buildings=(s.buildings[0], s.buildings[1], s.buildings[2], s.buildings[3]),
        stables=s.stables,
        merchants=s.merchants,
        street=s.street,
        walls=s.walls,
        well=s.well,
        palaces=_palace_views(s.palaces),
        palace_tiles=tuple(s.palace_tiles),
        tower_tiles=tuple(s.tower_tiles),
        tower_merchants=tuple(s.tower_merchants),
        tea_pool=s.tea_pool,
        exhausted=s.exhausted,
        seats=tuple(views),
        events=tuple(s.events_since(since)),
        first_event=since,
    )
