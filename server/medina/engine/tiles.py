"""Palace tiles, tower tiles and their merchants, tea tiles, and colour exhaustion."""

from __future__ import annotations

from dataclasses import replace

from .geometry import Mask
from .state import MERCHANTS, SLOTS, GameState, with_palace
from .types import NEUTRAL, NOBODY, Event, EventKind, Palace
from .variants import PURPLE


def tile_owner(p: Palace) -> int:
    """Who a palace wins tiles for: its owner's seat, or NOBODY for a neutral palace."""
    return NOBODY if p.owner == NEUTRAL else p.owner


def contacts(s: GameState, p: Palace, near: Mask) -> int:
    """Bitmask of towers whose arms hold a wall in ``near`` that ``p`` has not yet contacted."""
    found = 0
    for t, arm in enumerate(s.arms):
        if arm & near and not (p.towers >> t) & 1:
            found |= 1 << t
    return found


def make_contact(s: GameState, index: int, towers: int) -> None:
    """Palace ``index`` contacts ``towers`` for the first time: tiles and merchants move (7.2)."""
    p = s.palaces[index]
    s.palaces = with_palace(s.palaces, index, replace(p, towers=p.towers | towers))
    target = tile_owner(p)
    for t in range(4):
        if not (towers >> t) & 1:
            continue
        source = s.tower_tiles[t]
        if source != target:
            s.tower_tiles[t] = target
            s.emit(Event(EventKind.TOWER_TILE, tower=t, source=source, target=target))
        count = s.tower_merchants[t]
        if count:
            s.tower_merchants[t] = 0
            if target != NOBODY:
                s.supply[target * SLOTS + MERCHANTS] += count
            s.emit(Event(EventKind.TOWER_MERCHANTS, tower=t, target=target, count=count))


def contact_after_claim(s: GameState, index: int) -> None:
    """A freshly claimed palace contacts every tower whose arm it borders."""
    p = s.palaces[index]
    if not p.competes:
        return
    found = contacts(s, p, s.rules.geometry.adj(p.buildings | p.stables))
    if found:
        make_contact(s, index, found)


def contact_after_wall(s: GameState, tower: int, sq: int) -> None:
    """A new wall on ``sq`` (arm of ``tower``) contacts claimed palaces next to it."""
    near = s.rules.geometry.adjacent[sq]
    for i, p in enumerate(s.palaces):
        if p.competes and (p.buildings | p.stables) & near and not (p.towers >> tower) & 1:
            make_contact(s, i, 1 << tower)


def contact_after_stable(s: GameState, index: int, sq: int) -> None:
    """A new stable of a claimed palace contacts the arms next to it."""
    p = s.palaces[index]
    if p.competes:
        found = contacts(s, p, s.rules.geometry.adjacent[sq])
        if found:
            make_contact(s, index, found)


def receive_tea(s: GameState, p: Palace) -> None:
    """[v2] The 1st, 2nd and 3rd claims of a purple palace take 3, 2, 1 tea tiles (7.3)."""
    if not s.rules.tea or p.colour != PURPLE:
        return
    count = min(max(3 - s.purple_claims, 0), s.tea_pool)
    s.purple_claims += 1
    if count == 0:
        return
    s.tea_pool -= count
    target = tile_owner(p)
    if target != NOBODY:
        s.tea[target] += count
    s.emit(Event(EventKind.TEA_RECEIVED, seat=target, count=count))


def update_palace_tiles(s: GameState) -> None:
    """Give each palace tile to the largest competing palace, ties to the earliest (7.1)."""
    best: list[Palace | None] = [None, None, None, None]
    for p in s.palaces:
        if not p.competes:
            continue
        b = best[p.colour]
        if b is None or p.size > b.size or (p.size == b.size and p.time < b.time):
            best[p.colour] = p
    for colour, b in enumerate(best):
        target = NOBODY if b is None else tile_owner(b)
        source = s.palace_tiles[colour]
        if source != target:
            s.palace_tiles[colour] = target
            s.emit(Event(EventKind.PALACE_TILE, colour=colour, source=source, target=target))


def remove_blocking_rooftop(s: GameState, seat: int, colour: int) -> None:
    """[v1-2p] After ``seat`` roofed ``colour`` with both rooftop colours, the opponent's
    unplaced blocking rooftop for it leaves the game (6.3)."""
    bit = 1 << colour
    if s.roofs[seat] & bit or s.blocking[seat] & bit:
        return
    if _claimed_by(s, seat, colour, blocking=False) and _claimed_by(s, seat, colour, blocking=True):
        other = 1 - seat
        if s.blocking[other] & bit:
            s.blocking[other] &= ~bit
            s.emit(Event(EventKind.ROOFTOP_REMOVED, seat=other, colour=colour))


def _claimed_by(s: GameState, seat: int, colour: int, blocking: bool) -> bool:
    for p in s.palaces:
        if p.owner == seat and p.colour == colour and p.claimed and (not p.competes) == blocking:
            return True
    return False


def check_exhaustion(s: GameState) -> None:
    """Remove a colour's buildings from every supply once every claim of it is made (6.2)."""
    for colour in range(4):
        bit = 1 << colour
        if s.exhausted & bit:
            continue
        if any(r & bit for r in s.roofs):
            continue
        if s.rules.two_colour_roofs and any(b & bit for b in s.blocking):
            continue
        s.exhausted |= bit
        for seat in range(s.players):
            s.supply[seat * SLOTS + colour] = 0
        s.emit(Event(EventKind.COLOUR_EXHAUSTED, colour=colour))
