"""The merchant rule: extend the current street at an end, never beside two merchants."""

from __future__ import annotations

from ..errors import IllegalActionError
from ..geometry import Mask, Square, squares
from ..notation import names, square_name
from ..state import GameState


def merchant_sites(s: GameState, empty: Mask) -> Mask:
    """Where a merchant may go (6.5): next to an end of the current street if possible,
    else anywhere; never beside two merchants."""
    g = s.rules.geometry
    crowded = g.at_least_two_adjacent(s.merchants)
    free = empty & ~crowded
    ends = s.street & ~crowded
    at_ends = free & g.adj(ends)
    return at_ends if at_ends else free


def start_merchant_sites(s: GameState, empty: Mask) -> Mask:
    """[v1] The start merchant goes on any empty inner-city square."""
    return empty & s.rules.geometry.inner


def why_not_merchant(s: GameState, sq: Square, empty: Mask) -> IllegalActionError:
    """The rule a merchant on the empty city square ``sq`` breaks."""
    g = s.rules.geometry
    name = square_name(g, sq)
    count = (g.adjacent[sq] & s.merchants).bit_count()
    if count >= 2:
        return IllegalActionError(
            "merchant-crowded", f"merchant at {name} would be next to {count} merchants (at most 1)"
        )
    sites = merchant_sites(s, empty)
    return IllegalActionError(
        "street-end",
        f"the current street can still grow, so a merchant must extend it at one of its ends "
        f"(the squares that do: {names(g, squares(sites))}); {name} is not one",
    )


def place_merchant(s: GameState, sq: Square) -> None:
    """Put a merchant on ``sq``; its street becomes the current street (section 12)."""
    g = s.rules.geometry
    bit = 1 << sq
    s.merchants |= bit
    if g.adjacent[sq] & s.street:
        s.street |= bit
    else:
        s.street = g.component(bit, s.merchants)
