"""The champion's brain: selective iterative-deepening search over the engine's decisions.

Every decision (one placement or a tea break) is a ply. A node is expanded once: every legal
action is applied and the child judged by the evaluation (``champion_values``: greedy's
``heuristics.seat_values`` plus what claimed palaces can still gain, one value per seat),
and the children are kept best first for the mover. Deeper plies look only at the ``width``
best children of a node (``root_width`` at the root: 10 and 5 with two players, 6 and 3 with
more, ``default_config``), so the search is selective; the last ply is full width (the
mover's best child by the evaluation).

* **Two players**: alpha-beta (the evaluation is zero-sum between the two seats), children
  ordered by the evaluation, the root re-ordered by the previous iteration's values.
* **Three or four players**: max^n: each seat picks the child best for itself by the same
  evaluation it would play (its value minus a blend of the best and the mean opponent), so
  the next seats' turns are answered the way a strong opponent would, not paranoidly.

Iterative deepening runs depth 1, 2, ... until ``max_depth``, the budget of children
generated (``ChampionConfig.budget``, what in-process games use, so they are deterministic)
or the deadline (``clock()`` seconds, checked every few children); an iteration cut short
still counts when it finished the previous best move first (its value is exact and every
move it beat was proved better). Expanded nodes are kept between iterations, so deepening
costs only the new ply.

Hidden information: in Medina the public history fixes every supply (RULES 9), so the state
a seat's tracker rebuilds (``Turn.state``) is the deduced state; this module uses nothing
else.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from medina.engine import Action, ActionKind, GameState, apply_action, legal_moves
from medina.engine.board import empty_city, zone_overlap
from medina.engine.state import MERCHANTS, SLOTS, STABLES

from .heuristics import DEFAULT_WEIGHTS, Weights, seat_values

_ROOFTOP = int(ActionKind.ROOFTOP)

#: Children generated between two looks at the clock inside one expansion.
_CLOCK_EVERY = 16


class ChampionConfigError(ValueError):
    """A champion setting out of range; the message names it."""


@dataclass(frozen=True, slots=True)
class Prospects:
    """What the champion's evaluation adds to greedy's (``heuristics.seat_values``): the
    points a claimed palace can still gain, as a share of their value (below 1, so that
    taking them is still worth a placement).

    ``stable_site``: per empty square where its owner can still add a stable (next to one of
    its buildings, touching no other palace), up to the stables the owner holds;
    ``well_stable``: share of the 4-point well bonus for such a square on a well-bonus
    square; ``wall_site``: per empty wall space next to it (walls score and contact towers);
    ``merchant_site``: per square next to it where the current street can grow (at most
    two), while its owner holds a merchant.
    """

    stable_site: float = 0.4
    well_stable: float = 0.8
    wall_site: float = 0.3
    merchant_site: float = 0.3


DEFAULT_PROSPECTS = Prospects()


def champion_values(
    s: GameState, weights: Weights = DEFAULT_WEIGHTS, prospects: Prospects = DEFAULT_PROSPECTS
) -> list[float]:
    """Every seat's value in ``s``: greedy's (score, open palaces, reserves) plus the
    prospects of its claimed palaces (``Prospects``)."""
    values = seat_values(s, weights)
    if s.over:
        return values
    g = s.rules.geometry
    _, twice = zone_overlap(s.palaces)
    empty = empty_city(s)
    stable_free = empty & ~s.well_ring & ~twice
    wall_free = g.wall_spaces & ~s.walls
    bonus = s.well_bonus
    site_w = prospects.stable_site
    well_w = 4.0 * prospects.well_stable
    wall_w = prospects.wall_site
    merchant_w = prospects.merchant_site
    street_free = _street_sites(s, empty) if merchant_w else 0
    supply = s.supply
    for p in s.palaces:
        if p.roof != _ROOFTOP or p.owner < 0:
            continue
        owner = p.owner
        left = supply[owner * SLOTS + STABLES]
        if left:
            sites = stable_free & g.adj(p.buildings)
            if sites:
                values[owner] += site_w * min(sites.bit_count(), left) + well_w * min(
                    (sites & bonus).bit_count(), left
                )
        near = g.adj(p.buildings | p.stables)
        if wall_w:
            values[owner] += wall_w * (near & wall_free).bit_count()
        if street_free and supply[owner * SLOTS + MERCHANTS]:
            values[owner] += merchant_w * min(2, (near & street_free).bit_count())
    return values


def _street_sites(s: GameState, empty: int) -> int:
    """Squares where the current street can grow (next to an end, beside one merchant)."""
    g = s.rules.geometry
    crowded = g.at_least_two_adjacent(s.merchants)
    return empty & ~crowded & g.adj(s.street & ~crowded)


@dataclass(frozen=True, slots=True)
class ChampionConfig:
    """How much the champion searches.

    ``budget``: children generated (one ``apply_action`` and one evaluation each) per
    decision at most; ``root_width`` / ``width``: children searched below the root / below
    any other node (the best by the evaluation); ``max_depth``: plies (decisions) at most.
    """

    budget: int = 4000
    root_width: int = 10
    width: int = 5
    max_depth: int = 16
    weights: Weights = DEFAULT_WEIGHTS
    prospects: Prospects = DEFAULT_PROSPECTS

    def __post_init__(self) -> None:
        for name in ("budget", "root_width", "width", "max_depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ChampionConfigError(
                    f"champion {name} must be a positive integer, got {value!r}"
                )


DEFAULT_CONFIG = ChampionConfig()
#: With three or four players max^n gains more from depth than from width: 6 x 3 reaches a
#: ply further in the same children (in 4-player games, at 4,000 children, it won 0.73 of
#: 24 paired games against search level 2, where 10 x 5 won 0.42).
MULTIPLAYER_CONFIG = ChampionConfig(root_width=6, width=3)


def default_config(players: int) -> ChampionConfig:
    """The champion's settings for a game of ``players``."""
    return DEFAULT_CONFIG if players <= 2 else MULTIPLAYER_CONFIG


@dataclass(frozen=True, slots=True)
class ChampionResult:
    """What a search decided: the action, its value for the mover, the deepest iteration
    completed (or used in part), nodes expanded, children generated, whether the budget or
    the deadline stopped it before ``max_depth``."""

    action: Action
    value: float
    depth: int
    expansions: int
    generated: int
    stopped: bool


class _Stop(Exception):
    """The budget or the deadline ran out."""


class _Node:
    """A position and, once expanded, its children best first for the mover."""

    __slots__ = ("action", "children", "score", "state", "values")

    def __init__(
        self, action: Action | None, state: GameState | None, values: list[float], score: float
    ) -> None:
        self.action = action
        self.state = state
        self.values = values  # static value per seat
        self.score = score  # static value for the seat that chose it
        self.children: list[_Node] | None = None


def relative(values: Sequence[float], seat: int, best_opponent: float) -> float:
    """The value for ``seat`` of per-seat ``values``: its own minus a blend of the best and
    the mean opponent (as ``heuristics.evaluate``)."""
    mine = values[seat]
    n = len(values)
    if n == 1:
        return mine
    if n == 2:
        return mine - values[1 - seat]
    others = [v for i, v in enumerate(values) if i != seat]
    return mine - (best_opponent * max(others) + (1.0 - best_opponent) * sum(others) / len(others))


def position_key(s: GameState) -> tuple[object, ...]:
    """What makes two positions the same for the search: the board, the claims, the
    supplies, tiles and tea, and the turn (two placements of a turn made in either order
    reach the same key; palace-tile tie-break times are left out)."""
    b = s.buildings
    return (
        s.to_move,
        s.placed,
        s.quota,
        s.turn_colours,
        s.turn_roofs,
        b[0],
        b[1],
        b[2],
        b[3],
        s.stables,
        s.merchants,
        s.walls,
        s.street,
        tuple(s.roofs),
        tuple(s.blocking),
        tuple(s.supply),
        tuple(s.tea),
        tuple(s.palace_tiles),
        tuple(s.tower_tiles),
        frozenset((p.buildings, p.owner, p.roof) for p in s.palaces if p.roof),
    )


class _Searcher:
    def __init__(
        self,
        me: int,
        players: int,
        config: ChampionConfig,
        deadline: float | None,
        clock: Callable[[], float],
    ) -> None:
        self.me = me
        self.players = players
        self.config = config
        self.deadline = deadline
        self.clock = clock
        self.blend = config.weights.best_opponent
        self.keep = max(config.root_width, config.width)
        self.expansions = 0
        self.generated = 0
        self.table: dict[tuple[object, ...], list[_Node]] = {}

    def expand(
        self, node: _Node, legal: Sequence[Action] | None = None, root: bool = False
    ) -> list[_Node]:
        """The children of ``node`` best first for its mover (computed once)."""
        if node.children is not None:
            return node.children
        s = node.state
        assert s is not None
        key = position_key(s)
        known = self.table.get(key)
        if known is not None:  # the same position by another order of placements
            node.children = known
            return known
        if not root:
            self._check(0)
        mover = s.to_move
        weights = self.config.weights
        prospects = self.config.prospects
        blend = self.blend
        kids: list[_Node] = []
        actions = legal if legal else legal_moves(s).actions()
        for i, action in enumerate(actions):
            if not root and i % _CLOCK_EVERY == _CLOCK_EVERY - 1:
                self._check(i)
            child = apply_action(s, action)
            values = champion_values(child, weights, prospects)
            kids.append(_Node(action, child, values, relative(values, mover, blend)))
        self.generated += len(kids)
        self.expansions += 1
        kids.sort(key=lambda k: -k.score)  # stable: equal values keep the legal order
        for k in kids[self.keep :]:
            k.state = None  # never searched below: keep only its values
        node.children = kids
        self.table[key] = kids
        return kids

    def _check(self, extra: int) -> None:
        if self.generated + extra >= self.config.budget:
            raise _Stop
        if self.deadline is not None and self.clock() >= self.deadline:
            raise _Stop

    def mine(self, node: _Node) -> float:
        return relative(node.values, self.me, self.blend)

    # -- two players: alpha-beta on the value for ``me`` ------------------------------------

    def alphabeta(self, node: _Node, depth: int, alpha: float, beta: float) -> float:
        s = node.state
        if depth == 0 or s is None or s.over:
            return self.mine(node)
        kids = self.expand(node)
        if not kids:
            return self.mine(node)
        maximizing = s.to_move == self.me
        if depth == 1:  # full width: the mover's best child by the evaluation
            return kids[0].score if maximizing else -kids[0].score
        width = self.config.width
        if maximizing:
            best = -math.inf
            for k in kids[:width]:
                v = self.alphabeta(k, depth - 1, alpha, beta)
                if v > best:
                    best = v
                if best > alpha:
                    alpha = best
                if alpha >= beta:
                    break
            return best
        best = math.inf
        for k in kids[:width]:
            v = self.alphabeta(k, depth - 1, alpha, beta)
            if v < best:
                best = v
            if best < beta:
                beta = best
            if alpha >= beta:
                break
        return best

    # -- three or four players: max^n ---------------------------------------------------------

    def maxn(self, node: _Node, depth: int) -> list[float]:
        s = node.state
        if depth == 0 or s is None or s.over:
            return node.values
        kids = self.expand(node)
        if not kids:
            return node.values
        if depth == 1:
            return kids[0].values
        mover = s.to_move
        best = kids[0].values
        best_score = -math.inf
        for k in kids[: self.config.width]:
            v = self.maxn(k, depth - 1)
            score = relative(v, mover, self.blend)
            if score > best_score:
                best, best_score = v, score
        return best


def champion_search(
    s: GameState,
    config: ChampionConfig | None = None,
    *,
    deadline: float | None = None,
    legal: Sequence[Action] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ChampionResult:
    """Search ``s`` for the seat to move (see the module docstring) and return the move.

    ``config``: None for the champion's own (``default_config``). ``legal`` restricts the
    root to these actions (default: every legal one). The root is always expanded in full
    (the answer is at worst the evaluation's best move); the budget and ``deadline`` bound
    everything after it.
    """
    if config is None:
        config = default_config(s.players)
    me = s.to_move
    searcher = _Searcher(me, s.players, config, deadline, clock)
    root = _Node(None, s, champion_values(s, config.weights, config.prospects), 0.0)
    kids = searcher.expand(root, legal, root=True)
    if not kids:
        raise ValueError("no legal action to search")
    best = kids[0]
    best_value = best.score
    done_depth = 1
    stopped = False
    order = kids[: config.root_width]
    if len(kids) > 1:
        for depth in range(2, config.max_depth + 1):
            try:
                values = _iteration(searcher, order, depth)
            except _Partial as partial:
                stopped = True
                if partial.values:
                    best, best_value = _best(partial.values)
                    done_depth = depth
                break
            best, best_value = _best(values)
            done_depth = depth
            order = [node for node, _ in sorted(values, key=lambda nv: -nv[1])]
    assert best.action is not None  # a root child
    return ChampionResult(
        action=best.action,
        value=best_value,
        depth=done_depth,
        expansions=searcher.expansions,
        generated=searcher.generated,
        stopped=stopped,
    )


class _Partial(Exception):
    """An iteration cut short; ``values`` holds what it proved (empty: nothing usable)."""

    def __init__(self, values: list[tuple[_Node, float]]) -> None:
        super().__init__()
        self.values = values


def _best(values: list[tuple[_Node, float]]) -> tuple[_Node, float]:
    best, value = values[0]
    for node, v in values[1:]:
        if v > value:
            best, value = node, v
    return best, value


def _iteration(searcher: _Searcher, order: list[_Node], depth: int) -> list[tuple[_Node, float]]:
    """One iteration at ``depth``: (root child, value for the mover) in ``order``; raises
    _Partial when stopped (with the values proved so far if the first child finished)."""
    values: list[tuple[_Node, float]] = []
    me = searcher.me
    try:
        if searcher.players == 2:
            alpha = -math.inf
            for node in order:
                v = searcher.alphabeta(node, depth - 1, alpha, math.inf)
                values.append((node, v))
                if v > alpha:
                    alpha = v
        else:
            for node in order:
                v = relative(searcher.maxn(node, depth - 1), me, searcher.blend)
                values.append((node, v))
    except _Stop:
        raise _Partial(values) from None
    return values


def champion_strategy(
    config: ChampionConfig | None = None,
) -> Callable[[GameState, random.Random], Action]:
    """An in-process strategy searching with ``config``'s budget only (no clock; None: the
    champion's own, ``default_config`` for the game's players), so games between strategies
    are deterministic for a seed (the random generator is not used)."""

    def strategy(s: GameState, rng: random.Random) -> Action:
        del rng
        return champion_search(s, config).action

    strategy.__name__ = "champion"
    return strategy
