"""Shared helpers for the engine tests: board pictures, compact actions and error checks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
from medina.engine import (
    Action,
    ActionKind,
    GameState,
    IllegalActionError,
    apply_action,
    from_picture,
    get_ruleset,
    is_legal,
    parse_square,
    square_name,
    squares,
)
from medina.engine.geometry import Geometry, Mask
from medina.engine.notation import COLUMN_LETTERS

#: A well out of the way of most test positions, per board width (inner city).
DEFAULT_WELL = {18: "O10", 16: "M9"}

_WORDS = {
    "roof": ActionKind.ROOFTOP,
    "neutral": ActionKind.NEUTRAL_ROOFTOP,
    "block": ActionKind.BLOCKING_ROOFTOP,
    "stable": ActionKind.STABLE,
    "merchant": ActionKind.MERCHANT,
    "wall": ActionKind.WALL,
    "start": ActionKind.START_MERCHANT,
}
_COLOURS = {"grey": 0, "purple": 1, "brown": 2, "orange": 3}


def geometry_of(ruleset: str, players: int) -> Geometry:
    return get_ruleset(ruleset, players).geometry


def picture(
    ruleset: str,
    players: int,
    marks: Mapping[str, str] | None = None,
    *,
    well: str | None = "default",
) -> str:
    """A board picture in ``render`` format: an empty board plus ``marks`` (A1 -> token).

    ``well`` is the well's square for medina-v2 (``"default"``: out of the way).
    """
    rules = get_ruleset(ruleset, players)
    g = rules.geometry
    tokens = ["++" if (g.wall_spaces >> sq) & 1 else ".." for sq in range(g.size)]
    for t, tower in enumerate(g.towers):
        tokens[tower] = f"T{t + 1}"
    if rules.well and well is not None:
        tokens[parse_square(g, DEFAULT_WELL[g.cols] if well == "default" else well)] = "@@"
    for name, token in (marks or {}).items():
        tokens[parse_square(g, name)] = token
    lines = ["   " + " ".join(f"{COLUMN_LETTERS[c]} " for c in range(g.cols))]
    for r in range(g.rows):
        lines.append(f"{r + 1:>2} " + " ".join(tokens[r * g.cols : (r + 1) * g.cols]))
    return "\n".join(lines)


def position(
    ruleset: str,
    players: int,
    marks: Mapping[str, str] | None = None,
    *,
    well: str | None = "default",
    **kwargs: Any,
) -> GameState:
    """``from_picture`` of ``picture(ruleset, players, marks, well=well)``."""
    return from_picture(picture(ruleset, players, marks, well=well), ruleset, players, **kwargs)


def sq(s: GameState, name: str) -> int:
    """The square named ``name`` on ``s``'s board."""
    return parse_square(s.rules.geometry, name)


def action(s: GameState, text: str) -> Action:
    """``"grey F7"``, ``"roof F7"``, ``"neutral F7"``, ``"block F7"``, ``"stable F7"``,
    ``"merchant F7"``, ``"wall A5"``, ``"start F7"`` or ``"tea"``."""
    if text == "tea":
        return Action(ActionKind.TEA)
    word, name = text.split()
    if word in _COLOURS:
        return Action(ActionKind.BUILDING, sq(s, name), _COLOURS[word])
    return Action(_WORDS[word], sq(s, name))


def act(s: GameState, *moves: str) -> GameState:
    """Apply the actions written as in ``action`` in order."""
    for text in moves:
        s = apply_action(s, action(s, text))
    return s


def legal(s: GameState, text: str) -> bool:
    """Whether the action written as in ``action`` is legal now."""
    return is_legal(s, action(s, text))


def illegal(s: GameState, text: str, rule: str, *names: str) -> IllegalActionError:
    """Assert that the action is refused with ``rule`` and a message naming ``names``."""
    with pytest.raises(IllegalActionError) as info:
        apply_action(s, action(s, text))
    err = info.value
    assert err.rule == rule, f"{text}: expected rule {rule!r}, got {err.rule!r}: {err}"
    for name in names:
        assert re.search(rf"\b{name}\b", err.message), f"{name} not named in: {err.message}"
    return err


def squares_named(s: GameState, mask: int) -> set[str]:
    """A1 names of the squares of ``mask``."""
    return {square_name(s.rules.geometry, q) for q in squares(mask)}


def sides(g: Geometry) -> tuple[Mask, Mask, Mask, Mask]:
    """The wall spaces of the top, bottom, left and right sides of the ring."""
    top = sum(1 << g.square(0, c) for c in range(1, g.cols - 1))
    bottom = sum(1 << g.square(g.rows - 1, c) for c in range(1, g.cols - 1))
    left = sum(1 << g.square(r, 0) for r in range(1, g.rows - 1))
    right = sum(1 << g.square(r, g.cols - 1) for r in range(1, g.rows - 1))
    return top, bottom, left, right
