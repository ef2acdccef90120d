"""The search bot's brain: determinized Monte Carlo search over the mover's candidate actions.

Each iteration picks a root candidate by UCB1, samples a determinization of the hidden
information (``determinize``), plays the rest of the mover's turn and every opponent's next
turn with a sampled greedy rollout policy, and scores the position reached with the greedy
bot's evaluation (``medina.strategies.heuristics``). The candidate with the best mean value is
played. Everything is seeded: with an iteration budget (``SearchConfig.iterations``) and no
deadline, a search is a pure function of the state and the seed.

Levels 1..5 (``LEVELS``) widen the root and the rollouts and multiply the iterations; a
deadline (``time.monotonic()`` seconds) is checked before every rollout (one costs a few
milliseconds), so a bot that passes one never runs out of time.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from medina.engine import Action, ActionKind, GameState, apply_action, legal_moves

from .heuristics import DEFAULT_WEIGHTS, Weights, evaluate

_ROOF_KINDS = (ActionKind.ROOFTOP, ActionKind.NEUTRAL_ROOFTOP, ActionKind.BLOCKING_ROOFTOP)


class SearchLevelError(ValueError):
    """A search level or setting out of range; the message names it."""


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """How much a search does.

    ``iterations``: rollouts in all (the budget when no deadline stops it first);
    ``candidates``: root actions kept, the best by the static evaluation;
    ``width``: actions a rollout evaluates per opponent decision (rooftops always count);
    ``own_width``: the same for the mover's own decisions; ``epsilon``: chance a rollout
    plays a random evaluated action instead of the best; ``exploration``: UCB1 constant
    in evaluation points; ``max_depth``: decisions a rollout plays at most.
    """

    iterations: int = 48
    candidates: int = 6
    width: int = 6
    own_width: int = 10
    epsilon: float = 0.1
    exploration: float = 3.0
    max_depth: int = 16

    def __post_init__(self) -> None:
        for name in ("iterations", "candidates", "width", "own_width", "max_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise SearchLevelError(f"search {name} must be a positive integer, got {value!r}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise SearchLevelError(f"search epsilon must be 0..1, got {self.epsilon!r}")
        if self.exploration < 0:
            raise SearchLevelError(f"search exploration must be >= 0, got {self.exploration!r}")


#: Search levels: more candidates, wider rollouts and more iterations as the level grows.
LEVELS: dict[int, SearchConfig] = {
    1: SearchConfig(iterations=8, candidates=4, width=4, own_width=6),
    2: SearchConfig(iterations=20, candidates=5, width=5, own_width=8),
    3: SearchConfig(iterations=48, candidates=6, width=6, own_width=10),
    4: SearchConfig(iterations=120, candidates=8, width=8, own_width=12),
    5: SearchConfig(iterations=300, candidates=10, width=10, own_width=16),
}
DEFAULT_LEVEL = 3


def level_config(level: int) -> SearchConfig:
    """The configuration of search level ``level`` (1..5); SearchLevelError otherwise."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        raise SearchLevelError(
            f"search level must be one of {', '.join(map(str, LEVELS))}, got {level!r}"
        )
    return LEVELS[level]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One root action: its static value, the rollouts it got and their mean value."""

    action: Action
    prior: float
    visits: int
    value: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search decided and why: candidates best first, iterations run."""

    action: Action
    candidates: tuple[Candidate, ...]
    iterations: int
    stopped_early: bool


def determinize(s: GameState, seat: int, rng: random.Random) -> GameState:
    """A full state consistent with what ``seat`` knows, the hidden supplies sampled.

    In Medina every supply follows from the public history (RULES 9: the components are
    known, every placement and every tower-merchant and tea transfer is an event), so the
    consistent assignment is unique and the sample is the deduced state itself; ``rng``
    is accepted so that a variant with real hidden information plugs in here.
    """
    del seat, rng
    return s


def rollout_choice(
    s: GameState, rng: random.Random, width: int, epsilon: float, weights: Weights
) -> GameState:
    """The state after the rollout policy's action: the best, by the evaluation, of every
    legal rooftop and tea break and ``width`` sampled other actions (a random one of them
    with probability ``epsilon``)."""
    actions = legal_moves(s).actions()
    if len(actions) > width:
        must = [a for a in actions if a.kind in _ROOF_KINDS or a.kind is ActionKind.TEA]
        rest = [a for a in actions if a.kind not in _ROOF_KINDS and a.kind is not ActionKind.TEA]
        actions = must + rng.sample(rest, min(width, len(rest)))
    mover = s.to_move
    children = [apply_action(s, a) for a in actions]
    if len(children) > 1 and rng.random() < epsilon:
        return children[rng.randrange(len(children))]
    best = children[0]
    best_value = -math.inf
    for child in children:
        value = evaluate(child, mover, weights)
        if value > best_value:
            best, best_value = child, value
    return best


def rollout(
    s: GameState, me: int, rng: random.Random, config: SearchConfig, weights: Weights
) -> float:
    """Play from ``s`` until ``me`` begins a new turn (or the game ends, or ``max_depth``
    decisions), and return the evaluation of the position reached for ``me``."""
    left_me = s.to_move != me
    for _ in range(config.max_depth):
        if s.over:
            break
        if s.to_move == me:
            if left_me and s.placed == 0:
                break
            s = rollout_choice(s, rng, config.own_width, config.epsilon, weights)
        else:
            left_me = True
            s = rollout_choice(s, rng, config.width, config.epsilon, weights)
    return evaluate(s, me, weights)


def root_candidates(
    s: GameState, count: int, weights: Weights, legal: Sequence[Action] | None = None
) -> list[tuple[float, Action, GameState]]:
    """The ``count`` best actions by the static evaluation: (value, action, next state)."""
    me = s.to_move
    scored = []
    for action in legal if legal else legal_moves(s).actions():
        child = apply_action(s, action)
        scored.append((evaluate(child, me, weights), action, child))
    scored.sort(key=lambda item: -item[0])
    return scored[:count]


def search(
    s: GameState,
    rng: random.Random,
    config: SearchConfig,
    *,
    deadline: float | None = None,
    legal: Sequence[Action] | None = None,
    weights: Weights = DEFAULT_WEIGHTS,
    clock: Callable[[], float] = time.monotonic,
) -> SearchResult:
    """Search the position ``s`` for the seat to move (see the module docstring).

    ``deadline`` (``clock()`` seconds) is checked before every rollout; a search stopped
    before every candidate had one ranks them by the static evaluation alone (the greedy
    choice). ``legal`` restricts the root to these actions (default: every legal one).
    """
    me = s.to_move
    roots = root_candidates(s, config.candidates, weights, legal)
    n = len(roots)
    visits = [0] * n
    totals = [0.0] * n
    done = 0
    stopped = False
    if n > 1:
        for i in range(config.iterations):
            if deadline is not None and clock() >= deadline:
                stopped = True
                break
            k = i if i < n else _ucb(visits, totals, i, config.exploration)
            world = determinize(roots[k][2], me, rng)
            totals[k] += rollout(world, me, rng, config, weights)
            visits[k] += 1
            done += 1
    complete = all(visits) or n == 1
    cands = [
        Candidate(
            action, prior, visits[k], totals[k] / visits[k] if complete and visits[k] else prior
        )
        for k, (prior, action, _) in enumerate(roots)
    ]
    cands.sort(key=lambda c: -c.value)  # stable: equal values keep the static order
    return SearchResult(cands[0].action, tuple(cands), done, stopped)


def _ucb(visits: list[int], totals: list[float], t: int, c: float) -> int:
    log_t = math.log(t)
    best = 0
    best_score = -math.inf
    for k, v in enumerate(visits):
        score = totals[k] / v + c * math.sqrt(log_t / v)
        if score > best_score:
            best, best_score = k, score
    return best


def search_strategy(level: int) -> Callable[[GameState, random.Random], Action]:
    """An in-process strategy searching at ``level`` with its iteration budget only (no
    clock), so that games between strategies are deterministic for a seed."""
    config = level_config(level)

    def strategy(s: GameState, rng: random.Random) -> Action:
        return search(s, rng, config).action

    strategy.__name__ = f"search_{level}"
    return strategy
