"""The three rulesets as data: board size, components per player and rule switches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .errors import PlayerCountError, SetupError, UnknownRulesetError
from .geometry import Geometry, geometry

#: Palace colours in index order (docs/rules.md section 3); tile value = index + 1.
PALACE_COLOURS = ("grey", "purple", "brown", "orange")
#: Rooftop colours in the order seats take them.
ROOFTOP_COLOURS = ("red", "yellow", "blue", "green")
PURPLE = 1

RULESETS = ("medina-v2", "medina-v1", "medina-v1-2p")


@dataclass(frozen=True, slots=True)
class Components:
    """What each player receives at setup."""

    buildings: int  # per palace colour
    rooftops: int  # own (v1-2p: scoring) rooftops, one per palace colour
    neutral: int  # [v2] neutral rooftops
    blocking: int  # [v1-2p] blocking rooftops, one per palace colour
    stables: int
    merchants: int
    walls: int


@dataclass(frozen=True, slots=True)
class Ruleset:
    """One ruleset at one player count: everything the engine switches on."""

    name: str
    players: int
    components: Components
    geometry: Geometry
    well: bool  # [v2] well, well ring and well bonus
    tea: bool  # [v2] tea tiles
    tower_merchants: tuple[int, int, int, int]  # merchants on tower tiles 1..4 (by index)
    start_merchant_decision: bool  # [v1] the starting player places the start merchant
    two_colour_roofs: bool  # [v1-2p] scoring + blocking rooftops
    forced_rooftop: bool  # [v1, v1-2p]
    per_turn_limits: bool  # [v1-2p] one building per colour, one rooftop per colour a turn
    rooftop_colours: tuple[int, ...]  # own/scoring rooftop colour per seat
    blocking_colours: tuple[int, ...]  # [v1-2p] blocking rooftop colour per seat
    neutral_colour: int  # [v2] colour of the neutral rooftops, -1 when none

    def quota(self, turn: int) -> int:
        """Pieces to place in global turn ``turn`` (0-based, passes included).

        For the 1st-edition rulesets turn 0 is the starting player's first turn
        after the start merchant (v1) or the start merchant itself (v1-2p).
        """
        if self.name == "medina-v2":
            if self.players == 2:
                return 1 if turn == 0 else 2
            return 1 if turn < 2 else 2
        if self.name == "medina-v1-2p":
            return (1, 1, 2)[turn] if turn < 3 else 3
        return 2


_COMPONENTS: dict[tuple[str, int], Components] = {
    ("medina-v2", 2): Components(8, 4, 2, 0, 4, 12, 15),
    ("medina-v2", 3): Components(6, 4, 1, 0, 4, 8, 12),
    ("medina-v2", 4): Components(5, 4, 0, 0, 3, 6, 9),
    ("medina-v1", 3): Components(6, 4, 0, 0, 4, 8, 10),
    ("medina-v1", 4): Components(5, 4, 0, 0, 3, 6, 8),
    ("medina-v1-2p", 2): Components(9, 4, 0, 4, 6, 12, 16),
}


#: Every (ruleset, players) the engine supports, in table order.
CONFIGURATIONS: tuple[tuple[str, int], ...] = (
    ("medina-v2", 2),
    ("medina-v2", 3),
    ("medina-v2", 4),
    ("medina-v1", 3),
    ("medina-v1", 4),
    ("medina-v1-2p", 2),
)


def supported_players(name: str) -> tuple[int, ...]:
    """The player counts a ruleset supports; raises UnknownRulesetError."""
    if name not in RULESETS:
        raise UnknownRulesetError(
            f"unknown ruleset {name!r}: expected one of {', '.join(RULESETS)}"
        )
    return tuple(p for (n, p) in _COMPONENTS if n == name)


def get_ruleset(name: str, players: int) -> Ruleset:
    """The ruleset ``name`` for ``players`` players.

    >>> get_ruleset("medina-v2", 4).components.walls
    9
    """
    allowed = supported_players(name)
    if players not in allowed:
        raise PlayerCountError(
            f"ruleset {name!r} does not support {players} players: "
            f"supported counts are {', '.join(map(str, allowed))}"
        )
    comps = _COMPONENTS[(name, players)]
    v2 = name == "medina-v2"
    small = v2 and players == 2
    if name == "medina-v1-2p":
        rooftops: tuple[int, ...] = (1, 2)  # seat 1 yellow, seat 2 blue (scoring)
        blocking: tuple[int, ...] = (0, 3)  # seat 1 red, seat 2 green (blocking)
    else:
        rooftops = tuple(range(players))
        blocking = ()
    neutral = players if v2 and players < 4 else -1
    return Ruleset(
        name=name,
        players=players,
        components=comps,
        geometry=geometry(16, 12) if small else geometry(18, 13),
        well=v2,
        tea=v2,
        tower_merchants=(3, 2, 1, 0) if v2 else (0, 0, 0, 0),
        start_merchant_decision=not v2,
        two_colour_roofs=name == "medina-v1-2p",
        forced_rooftop=not v2,
        per_turn_limits=name == "medina-v1-2p",
        rooftop_colours=rooftops,
        blocking_colours=blocking,
        neutral_colour=neutral,
    )


def with_colours(
    rules: Ruleset,
    rooftop_colours: Sequence[int] | None = None,
    blocking_colours: Sequence[int] | None = None,
) -> Ruleset:
    """``rules`` with the seats' rooftop colours chosen by the match (RULES 3: "unless the
    match says otherwise"); None keeps the defaults. Colours are 0 red, 1 yellow, 2 blue,
    3 green, all different; [v2, 2-3 players] the neutral rooftops take the lowest colour no
    seat uses."""
    own = tuple(rooftop_colours) if rooftop_colours is not None else rules.rooftop_colours
    blocking = tuple(blocking_colours) if blocking_colours is not None else rules.blocking_colours
    if blocking_colours is not None and not rules.two_colour_roofs:
        raise SetupError(f"{rules.name} has no blocking rooftops; give no blocking colours")
    for what, given in (("rooftop", own), ("blocking rooftop", blocking)):
        expected = rules.players if what == "rooftop" or rules.two_colour_roofs else 0
        if len(given) != expected:
            raise SetupError(
                f"{len(given)} {what} colours given for {rules.players} seats (expected {expected})"
            )
        bad = [c for c in given if not 0 <= c <= 3]
        if bad:
            raise SetupError(f"{what} colour {bad[0]} is not a colour (0..3: red..green)")
    used = own + blocking
    if len(set(used)) != len(used):
        raise SetupError(f"rooftop colours {list(used)} repeat a colour: every seat needs its own")
    neutral = rules.neutral_colour
    if neutral >= 0:
        neutral = min(c for c in range(4) if c not in used)
    return replace(rules, rooftop_colours=own, blocking_colours=blocking, neutral_colour=neutral)
