"""Game states from ASCII board pictures: ``from_picture`` reads exactly what ``render`` prints.

Tests state positions as pictures (see ``notation`` for the tokens)::

    s = from_picture(picture, "medina-v2", 4, to_move=2)

The board fixes almost everything; what a picture cannot show is derived as the
physical game would have it, or taken from keyword arguments:

* **Palaces** are the orthogonally connected groups of same-colour buildings; a
  stable joins the palace whose building it borders. A palace is claimed when its
  tokens carry a rooftop letter; the capitalised building carries the rooftop.
  The letter names the owner and the rooftop kind through the ruleset (a seat's
  own/scoring colour, [v1-2p] its blocking colour, [v2] the neutral colour).
* **Walls** are assigned to the arm of the tower they are connected to along the
  ring. Claimed competing palaces have contacted every tower whose arm they
  border now (contact is automatic, so it has happened).
* **Supplies** default to the full starting components minus the rooftops the
  seat has on the board: its own (scoring) and [v1-2p] blocking rooftops by
  colour, and [v2] neutral rooftops charged one at a time to seats 0, 1, 2, ...
  in turn. [v1-2p] A blocking rooftop removed by the opponent's double claim is
  gone. Buildings of an exhausted colour are removed from every supply. Walls,
  stables, merchants and other buildings stay full (tower merchants are not added).
* **Palace times** (palace-tile ties): claimed palaces are numbered in square
  order of their lowest building; the palace-tile holders (given or derived as
  the largest competing palace, ties to the lowest square) come first.
* **Tower tiles**: a tower nobody contacted keeps its tile at the board edge with
  its merchants; otherwise the tile is held by the owner of the contacting palace
  that is latest in the order above (or the holder given), and its merchants are
  gone.
* **Tea** [v2]: the 1st, 2nd and 3rd purple claims took 3, 2 and 1 tiles from the
  pool; by default the players have spent them all (``tea`` gives holdings).
* **Turn**: ``turn`` is the 0-based index of the current turn (default 3, the first
  turn with the full quota in every ruleset); ``quota`` defaults to that turn's.
  A 1st-edition board without merchants is the start-merchant decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .errors import NotationError, SetupError
from .geometry import Geometry, Mask, Square, lowest, squares
from .movegen import decide, placements
from .notation import COLOUR_LETTERS, ROOF_LETTERS, parse_tokens, square_name
from .setup import empty_state, put_well
from .state import NEUTRALS, SLOTS, GameState, Phase
from .tiles import tile_owner
from .types import NEUTRAL, NOBODY, UNCLAIMED, ActionKind, Palace, Supply
from .variants import PALACE_COLOURS, PURPLE, ROOFTOP_COLOURS, Ruleset, get_ruleset

_TEA_FOR_CLAIM = (3, 2, 1)
_SIDES = ("top", "bottom", "right", "left")


@dataclass(slots=True)
class _Board:
    """The pieces read from a picture, before palaces are formed."""

    buildings: list[Mask]
    roof_letters: dict[Square, str]  # building or stable square -> "." or rooftop letter
    roof_squares: Mask  # capitalised buildings
    stables: Mask = 0
    merchants: Mask = 0
    street: Mask = 0
    walls: Mask = 0
    wells: Mask = 0


def from_picture(
    picture: str,
    ruleset: str,
    players: int,
    *,
    to_move: int | None = None,
    start_seat: int = 0,
    turn: int = 3,
    quota: int | None = None,
    placed: int = 0,
    supplies: Mapping[int, Supply] | None = None,
    tea: Sequence[int] | None = None,
    palace_tiles: Sequence[int] | None = None,
    tower_tiles: Sequence[int] | None = None,
    seed: int = 0,
) -> GameState:
    """The state whose board ``render`` draws as ``picture`` (see the module docstring).

    ``to_move`` defaults to ``start_seat``. Raises NotationError for a picture that
    is malformed or shows an impossible board, SetupError for inconsistent
    arguments, and the ruleset lookup errors for a bad ruleset or player count.
    """
    rules = get_ruleset(ruleset, players)
    for what, seat in (("start seat", start_seat), ("seat to move", to_move)):
        if seat is not None and not 0 <= seat < players:
            raise SetupError(f"{what} {seat} is not a seat of a {players}-player game")
    g = rules.geometry
    board = _read_tokens(rules, parse_tokens(g, picture))
    s = empty_state(rules, seed, start_seat)
    s.walls = board.walls
    s.arms = _arms(g, board.walls)
    _put_well(s, board.wells)
    _put_merchants(s, board)
    s.buildings = board.buildings
    s.stables = board.stables
    s.palaces = tuple(_palaces(s, board))
    s.next_pid = len(s.palaces)
    _separate(s)
    _charge_rooftops(s)
    if supplies is not None:
        _put_supplies(s, supplies)
    _exhaust(s, given=supplies or {})
    _order_and_tiles(s, palace_tiles)
    _tower_tiles(s, tower_tiles)
    _tea(s, tea)
    _start(s, to_move if to_move is not None else start_seat, turn, quota, placed)
    return s


def _read_tokens(rules: Ruleset, tokens: list[str]) -> _Board:
    """Check every token against its square and collect the pieces."""
    g = rules.geometry
    board = _Board(buildings=[0, 0, 0, 0], roof_letters={}, roof_squares=0)
    towers = {sq: f"T{t + 1}" for t, sq in enumerate(g.towers)}
    for sq, tok in enumerate(tokens):
        bit = 1 << sq
        where = f"{tok!r} at {square_name(g, sq)}"
        if sq in towers:
            if tok != towers[sq]:
                raise NotationError(f"board picture: {where}: this corner holds {towers[sq]}")
        elif g.wall_spaces & bit:
            if tok == "##":
                board.walls |= bit
            elif tok != "++":
                raise NotationError(f"board picture: {where}: a wall space holds '++' or '##'")
        elif tok == "@@":
            board.wells |= bit
        elif tok in ("mm", "MM"):
            board.merchants |= bit
            if tok == "MM":
                board.street |= bit
        elif tok != "..":
            _read_piece(g, board, sq, tok)
    return board


def _read_piece(g: Geometry, board: _Board, sq: Square, tok: str) -> None:
    """A building or stable token on a city square."""
    where = f"{tok!r} at {square_name(g, sq)}"
    if len(tok) != 2 or tok[1] not in "." + ROOF_LETTERS:
        raise NotationError(f"board picture: unknown token {where}")
    bit = 1 << sq
    if tok[0] == "s":
        board.stables |= bit
    elif tok[0].lower() in COLOUR_LETTERS:
        board.buildings[COLOUR_LETTERS.index(tok[0].lower())] |= bit
        if tok[0].isupper():
            if tok[1] == ".":
                raise NotationError(
                    f"board picture: {where}: a capital marks the rooftop, but '.' is unclaimed"
                )
            board.roof_squares |= bit
    else:
        raise NotationError(f"board picture: unknown token {where}")
    board.roof_letters[sq] = tok[1]


def _arms(g: Geometry, walls: Mask) -> list[Mask]:
    """Walls per tower: walk each side from its tower while the walls run on (6.1)."""
    arms = [0, 0, 0, 0]
    for t, tower in enumerate(g.towers):
        row, col = g.row_col(tower)
        for dr, dc in ((0, 1 if col == 0 else -1), (1 if row == 0 else -1, 0)):
            r, c = row + dr, col + dc
            while (walls >> g.square(r, c)) & 1:
                arms[t] |= 1 << g.square(r, c)
                r, c = r + dr, c + dc
            if (g.tower_mask >> g.square(r, c)) & 1:
                side = _side(g, row + dr, col + dc)
                raise NotationError(
                    f"board picture: the {side} side is walled from tower to tower; "
                    "its gate must stay open"
                )
    loose = walls & ~(arms[0] | arms[1] | arms[2] | arms[3])
    if loose:
        raise NotationError(
            f"board picture: wall at {square_name(g, lowest(loose))} is not connected to a tower"
        )
    return arms


def _side(g: Geometry, row: int, col: int) -> str:
    if row == 0:
        return _SIDES[0]
    if row == g.rows - 1:
        return _SIDES[1]
    return _SIDES[2] if col == g.cols - 1 else _SIDES[3]


def _put_well(s: GameState, wells: Mask) -> None:
    g = s.rules.geometry
    count = wells.bit_count()
    if not s.rules.well:
        if count:
            raise NotationError(
                f"board picture: {s.rules.name} has no well, "
                f"but '@@' is at {square_name(g, lowest(wells))}"
            )
        return
    if count != 1:
        raise NotationError(f"board picture: {s.rules.name} needs one well '@@', found {count}")
    sq = lowest(wells)
    if not g.inner & wells:
        raise NotationError(
            f"board picture: the well at {square_name(g, sq)} must be in the inner city"
        )
    put_well(s, sq)


def _put_merchants(s: GameState, board: _Board) -> None:
    """Merchants, and the current street: the merchants written ``MM``."""
    g = s.rules.geometry
    if board.merchants and not board.street:
        raise NotationError("board picture: merchants but no current street ('MM')")
    if board.street:
        whole = g.component(board.street & -board.street, board.merchants)
        odd = whole ^ board.street
        if odd:
            raise NotationError(
                f"board picture: the current street ('MM') must be one whole street; "
                f"the merchant at {square_name(g, lowest(odd))} breaks it"
            )
    s.merchants = board.merchants
    s.street = board.street


def _palaces(s: GameState, board: _Board) -> list[Palace]:
    """Group buildings into palaces, attach stables, read the rooftops."""
    g = s.rules.geometry
    groups: list[tuple[int, Mask]] = []
    for colour, mask in enumerate(board.buildings):
        rest = mask
        while rest:
            comp = g.component(rest & -rest, mask)
            groups.append((colour, comp))
            rest &= ~comp
    groups.sort(key=lambda cg: lowest(cg[1]))
    stables = [0] * len(groups)
    for sq in squares(board.stables):
        near = [i for i, (_, b) in enumerate(groups) if b & g.adjacent[sq]]
        name = square_name(g, sq)
        if not near:
            raise NotationError(f"board picture: stable at {name} is next to no building")
        if len(near) > 1:
            raise NotationError(f"board picture: stable at {name} borders two palaces")
        stables[near[0]] |= 1 << sq
    return [
        _palace(s, board, pid, colour, b, stables[pid]) for pid, (colour, b) in enumerate(groups)
    ]


def _palace(
    s: GameState, board: _Board, pid: int, colour: int, buildings: Mask, stables: Mask
) -> Palace:
    g = s.rules.geometry
    pieces = buildings | stables
    where = f"the {PALACE_COLOURS[colour]} palace at {square_name(g, lowest(buildings))}"
    letters = {board.roof_letters[sq] for sq in squares(pieces)}
    if len(letters) != 1:
        raise NotationError(
            f"board picture: {where} mixes rooftop letters {''.join(sorted(letters))}"
        )
    letter = letters.pop()
    roofs = buildings & board.roof_squares
    owner, roof, roof_square = UNCLAIMED, 0, -1
    if letter != ".":
        if roofs.bit_count() != 1:
            raise NotationError(
                f"board picture: {where} is claimed, so exactly one of its buildings is "
                f"written in capitals (found {roofs.bit_count()})"
            )
        owner, roof = _roof_owner(s.rules, letter, where)
        roof_square = lowest(roofs)
    return Palace(
        pid=pid,
        colour=colour,
        buildings=buildings,
        stables=stables,
        zone=g.touch(pieces),
        reach=g.adj(buildings),
        owner=owner,
        roof=roof,
        roof_square=roof_square,
    )


def _roof_owner(rules: Ruleset, letter: str, where: str) -> tuple[int, int]:
    """(owner, rooftop ActionKind) of the rooftop colour ``letter``."""
    colour = ROOF_LETTERS.index(letter)
    if colour in rules.rooftop_colours:
        return rules.rooftop_colours.index(colour), int(ActionKind.ROOFTOP)
    if colour in rules.blocking_colours:
        return rules.blocking_colours.index(colour), int(ActionKind.BLOCKING_ROOFTOP)
    if colour == rules.neutral_colour:
        return NEUTRAL, int(ActionKind.NEUTRAL_ROOFTOP)
    raise NotationError(
        f"board picture: {where} has a {ROOFTOP_COLOURS[colour]} rooftop, a colour not in "
        f"play in {rules.name} with {rules.players} players"
    )


def _describe(g: Geometry, p: Palace) -> str:
    return f"the {PALACE_COLOURS[p.colour]} palace at {square_name(g, lowest(p.buildings))}"


def _separate(s: GameState) -> None:
    """No two palaces touch (6.2) and nothing stands in the well ring."""
    g = s.rules.geometry
    for i, p in enumerate(s.palaces):
        if p.pieces & s.well_ring:
            sq = lowest(p.pieces & s.well_ring)
            raise NotationError(
                f"board picture: {square_name(g, sq)} of {_describe(g, p)} is next to the well"
            )
        for q in s.palaces[i + 1 :]:
            if p.zone & q.pieces:
                raise NotationError(
                    f"board picture: {_describe(g, p)} touches {_describe(g, q)} "
                    f"at {square_name(g, lowest(p.zone & q.pieces))}"
                )


def _charge_rooftops(s: GameState) -> None:
    """Take the rooftops on the board out of the default supplies (one claim per colour)."""
    rules = s.rules
    g = rules.geometry
    neutral = 0
    for p in s.palaces:
        if p.owner == NEUTRAL:
            neutral += 1
        elif p.owner >= 0:
            masks = s.blocking if p.roof == ActionKind.BLOCKING_ROOFTOP else s.roofs
            if not (masks[p.owner] >> p.colour) & 1:
                raise NotationError(
                    f"board picture: seat {p.owner} has two {PALACE_COLOURS[p.colour]} palaces "
                    f"under the same rooftop colour (one at {square_name(g, p.roof_square)})"
                )
            masks[p.owner] &= ~(1 << p.colour)
    seat = 0
    while neutral:
        if all(s.supply[o * SLOTS + NEUTRALS] == 0 for o in range(rules.players)):
            raise NotationError("board picture: more neutral rooftops than the players had")
        if s.supply[seat * SLOTS + NEUTRALS]:
            s.supply[seat * SLOTS + NEUTRALS] -= 1
            neutral -= 1
        seat = (seat + 1) % rules.players
    if rules.two_colour_roofs:
        for seat in range(rules.players):
            both = 0b1111 & ~(s.roofs[seat] | s.blocking[seat])  # claimed with both colours
            s.blocking[1 - seat] &= ~both  # the opponent's blocking rooftop left the game (6.3)


def _put_supplies(s: GameState, supplies: Mapping[int, Supply]) -> None:
    """Replace default supplies by given ones, checked against the rooftops on the board."""
    for seat, sup in supplies.items():
        if not 0 <= seat < s.players:
            raise SetupError(f"supply for seat {seat}: not a seat of a {s.players}-player game")
        counts = (*sup.buildings, sup.stables, sup.merchants, sup.walls, sup.neutral)
        if min(counts) < 0 or not 0 <= sup.rooftops < 16 or not 0 <= sup.blocking < 16:
            raise SetupError(f"supply for seat {seat} has a negative count or a bad mask: {sup}")
        for kind, given, left in (
            ("rooftop", sup.rooftops, s.roofs[seat]),
            ("blocking rooftop", sup.blocking, s.blocking[seat]),
        ):
            extra = given & ~left
            if extra:
                colour = PALACE_COLOURS[lowest(extra)]
                raise SetupError(
                    f"supply for seat {seat} holds a {kind} for {colour}, but that rooftop is "
                    f"on the board"
                )
        b = seat * SLOTS
        s.supply[b : b + SLOTS] = list(counts)
        s.roofs[seat] = sup.rooftops
        s.blocking[seat] = sup.blocking


def _exhaust(s: GameState, given: Mapping[int, Supply]) -> None:
    """Colours every claim of which is made leave every supply (6.2)."""
    for colour in range(4):
        bit = 1 << colour
        if any(r & bit for r in s.roofs) or any(b & bit for b in s.blocking):
            continue
        s.exhausted |= bit
        for seat in range(s.players):
            if seat in given and given[seat].buildings[colour]:
                raise SetupError(
                    f"supply for seat {seat} holds {PALACE_COLOURS[colour]} buildings, but every "
                    f"{PALACE_COLOURS[colour]} claim is made (the colour is exhausted)"
                )
            s.supply[seat * SLOTS + colour] = 0


def _order_and_tiles(s: GameState, holders: Sequence[int] | None) -> None:
    """Palace times (tile holders first) and the palace tiles (7.1)."""
    g = s.rules.geometry
    if holders is not None and len(holders) != 4:
        raise SetupError(f"palace tiles {list(holders)}: need one holder per palace colour")
    first: set[int] = set()
    tiles = [NOBODY] * 4
    for colour in range(4):
        rivals = [p for p in s.palaces if p.competes and p.colour == colour]
        most = max((p.size for p in rivals), default=0)
        best = [p for p in rivals if p.size == most]
        if holders is None:
            chosen = best[0] if best else None
        else:
            want = holders[colour]
            chosen = next((p for p in best if tile_owner(p) == want), None)
            if chosen is None and (best or want != NOBODY):
                raise SetupError(
                    f"the {PALACE_COLOURS[colour]} palace tile cannot be held by {want}: "
                    f"the largest claimed {PALACE_COLOURS[colour]} palaces are "
                    f"{[square_name(g, p.roof_square) for p in best]}"
                )
        if chosen is not None:
            first.add(chosen.pid)
            tiles[colour] = tile_owner(chosen)
    claimed = sorted((p for p in s.palaces if p.claimed), key=lambda p: p.pid not in first)
    times = {p.pid: t for t, p in enumerate(claimed, start=1)}
    s.palaces = tuple(
        [
            replace(p, time=times[p.pid], towers=_contacts(s, p)) if p.claimed else p
            for p in s.palaces
        ]
    )
    s.palace_tiles = tiles
    b = s.buildings
    s.ply = (b[0] | b[1] | b[2] | b[3] | s.stables | s.merchants | s.walls).bit_count() + len(
        claimed
    )


def _contacts(s: GameState, p: Palace) -> int:
    """Towers a claimed competing palace borders through an arm (7.2)."""
    if not p.competes:
        return 0
    near = s.rules.geometry.adj(p.pieces)
    return sum(1 << t for t, arm in enumerate(s.arms) if arm & near)


def _tower_tiles(s: GameState, holders: Sequence[int] | None) -> None:
    """Tower tiles: at the edge with their merchants until contacted (7.2)."""
    if holders is not None and len(holders) != 4:
        raise SetupError(f"tower tiles {list(holders)}: need one holder per tower")
    for t in range(4):
        touching = sorted(
            (p for p in s.palaces if (p.towers >> t) & 1), key=lambda p: p.time, reverse=True
        )
        owners = [tile_owner(p) for p in touching]
        want = holders[t] if holders is not None else (owners[0] if owners else NOBODY)
        if (owners and want not in owners) or (not owners and want != NOBODY):
            raise SetupError(
                f"tower tile {t + 1} cannot be held by {want}: palaces in contact with it "
                f"belong to {owners or 'nobody'}"
            )
        s.tower_tiles[t] = want
        if owners:
            s.tower_merchants[t] = 0


def _tea(s: GameState, tea: Sequence[int] | None) -> None:
    """[v2] Tea tiles handed out for purple claims; holdings as given (default none)."""
    claims = sum(1 for p in s.palaces if p.claimed and p.colour == PURPLE)
    handed = sum(_TEA_FOR_CLAIM[:claims]) if s.rules.tea else 0
    held = list(tea) if tea is not None else [0] * s.players
    if len(held) != s.players or min(held) < 0 or sum(held) > handed:
        raise SetupError(
            f"tea {held}: need one count per seat, at most the {handed} tiles that "
            f"{claims} purple claims handed out"
        )
    s.purple_claims = claims if s.rules.tea else 0
    s.tea = held
    s.tea_pool -= handed


def _start(s: GameState, to_move: int, turn: int, quota: int | None, placed: int) -> None:
    """Phase, turn and quota, and the legal actions of the first decision."""
    rules = s.rules
    s.to_move = to_move
    if rules.start_merchant_decision and not s.merchants:
        b = s.buildings
        if b[0] | b[1] | b[2] | b[3] | s.stables | s.walls:
            raise NotationError(
                "board picture: a 1st-edition game opens with the start merchant, "
                "so a board with pieces needs a merchant"
            )
        s.phase = Phase.START_MERCHANT
        if to_move != s.start_seat:
            raise SetupError(f"the start merchant is placed by the start seat {s.start_seat}")
        if rules.two_colour_roofs:
            s.quota, s.turn = rules.quota(0), 1
        return
    s.turn = turn + 1
    s.quota = rules.quota(turn) if quota is None else quota
    if not 0 <= placed < s.quota:
        raise SetupError(f"placed {placed} must be at least 0 and below the quota {s.quota}")
    s.placed = placed
    moves = placements(s, to_move)
    if moves.has_placement():
        s.legal_cache = decide(s, moves)
        return
    if any(placements(s, seat).has_placement() for seat in range(rules.players)):
        raise SetupError(
            f"seat {to_move} has no legal placement here: it would pass, so it is not to move"
        )
    s.phase = Phase.OVER
