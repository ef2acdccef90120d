"""Scripted openings that lead to the positions check-bot asks about, found by seeded self-play.

An opening is a list of legal actions from the match's own setup, so the bot
sees a real history: a bot that rebuilds the game from its events can follow
it. Positions are found by playing seeded games with a *director* (a random
policy with preferences per seat: keep one piece kind, keep tea tiles, ...)
and stopping at the first state that has what the scenario needs. The search
is deterministic and takes milliseconds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection

from medina.engine import Action, ActionKind, GameState, LegalMoves, apply_action, new_game
from medina.engine.movegen import legal_moves, placements

#: Games tried before a search gives up (positions are usually found in the first few).
ATTEMPTS = 300

#: Chooses an action for the seat to move from the legal ones.
Director = Callable[[GameState, list[Action], random.Random], Action]
#: Whether a state is the one wanted.
Goal = Callable[[GameState], bool]


class PositionNotFoundError(RuntimeError):
    """No game of the search reached the wanted position."""


def legal_kinds(moves: LegalMoves) -> frozenset[ActionKind]:
    """The action kinds among ``moves`` (TEA when a tea break is legal)."""
    return frozenset(a.kind for a in moves.actions())


def replay(ruleset: str, players: int, seed: int, opening: Collection[Action]) -> GameState:
    """The state after ``opening`` from the setup of ``seed``."""
    s = new_game(ruleset, players, seed)
    for action in opening:
        s = apply_action(s, action)
    return s


def search(
    ruleset: str, players: int, seed: int, *, tag: str, director: Director, goal: Goal
) -> tuple[Action, ...]:
    """The actions of the first directed game that reaches ``goal`` (the goal state is
    after them). Each attempt's randomness comes from ``tag``, ``seed`` and the attempt."""
    for attempt in range(ATTEMPTS):
        rng = random.Random(f"check-bot:{tag}:{seed}:{attempt}")
        s = new_game(ruleset, players, seed)
        actions: list[Action] = []
        while not s.over:
            if goal(s):
                return tuple(actions)
            action = director(s, legal_moves(s).actions(), rng)
            actions.append(action)
            s = apply_action(s, action)
    raise PositionNotFoundError(
        f"no {tag} position in {ATTEMPTS} {ruleset} {players}-player games from seed {seed}"
    )


def directed(avoid: dict[int, frozenset[ActionKind]], tea_takers: Collection[int] = ()) -> Director:
    """A director: seats in ``tea_takers`` take every tea break offered (so they keep their
    pieces longer); every seat avoids its kinds in ``avoid`` while it has anything else."""

    def choose(s: GameState, actions: list[Action], rng: random.Random) -> Action:
        seat = s.to_move
        if seat in tea_takers and actions[-1].kind is ActionKind.TEA:
            return actions[-1]
        kinds = avoid.get(seat, frozenset())
        pool = [a for a in actions if a.kind not in kinds] or actions
        return pool[rng.randrange(len(pool))]

    return choose


def _no_tea(players: int) -> dict[int, frozenset[ActionKind]]:
    return {seat: frozenset({ActionKind.TEA}) for seat in range(players)}


def only_kind(
    ruleset: str, players: int, seed: int, bot: int, kind: ActionKind
) -> tuple[Action, ...]:
    """An opening after which ``bot`` decides and every legal action is of ``kind``.

    The bot's seat keeps its pieces of ``kind`` and places the others, so late in
    the game ``kind`` is all it has left (or all that still fits).
    """
    avoid = _no_tea(players)
    avoid[bot] = frozenset({kind, ActionKind.TEA})

    def goal(s: GameState) -> bool:
        return s.to_move == bot and legal_kinds(legal_moves(s)) == {kind}

    return search(
        ruleset, players, seed, tag=f"only-{kind.name}", director=directed(avoid), goal=goal
    )


def tea_offered(ruleset: str, players: int, seed: int, bot: int) -> tuple[Action, ...]:
    """An opening after which ``bot`` decides with a tea break among at most 3 actions."""

    def goal(s: GameState) -> bool:
        moves = legal_moves(s)
        return s.to_move == bot and moves.tea and len(moves) <= 3

    return search(ruleset, players, seed, tag="tea", director=directed(_no_tea(players)), goal=goal)


def tea_then_pass(ruleset: str, players: int, seed: int, bot: int) -> tuple[Action, ...]:
    """An opening after which the seat after ``bot`` may end its turn with a tea break, the
    seats after it have no legal placement (they pass automatically) and ``bot`` has one.

    So a seat that takes the break is followed by automatic passes before ``bot`` is
    asked. Needs 3 or more players (with 2 the pass would have to be the bot's own).
    """
    if players < 3:
        raise ValueError(f"tea_then_pass needs 3 or more players, got {players}")
    taker = (bot + 1) % players
    passers = [(taker + k) % players for k in range(1, players - 1)]
    avoid = _no_tea(players)
    del avoid[bot]

    def goal(s: GameState) -> bool:
        return (
            s.to_move == taker
            and legal_moves(s).tea
            and not any(placements(s, p).has_placement() for p in passers)
            and placements(s, bot).has_placement()
        )

    return search(
        ruleset, players, seed, tag="tea-pass", director=directed(avoid, (bot,)), goal=goal
    )


def late(ruleset: str, players: int, seed: int, bot: int, remaining: int) -> tuple[Action, ...]:
    """An opening of a seeded random game that stops where ``bot`` is to move with at least
    ``remaining`` decisions of that game still to come (as late as that allows)."""
    rng = random.Random(f"check-bot:late:{seed}")
    s = new_game(ruleset, players, seed)
    actions: list[Action] = []
    movers: list[int] = []
    while not s.over:
        movers.append(s.to_move)
        action = legal_moves(s).nth(rng.randrange(len(legal_moves(s))))
        actions.append(action)
        s = apply_action(s, action)
    for cut in range(len(actions) - remaining, -1, -1):
        if movers[cut] == bot:
            return tuple(actions[:cut])
    raise PositionNotFoundError(f"seat {bot} never moves in the {ruleset} game from seed {seed}")


__all__ = [
    "ATTEMPTS",
    "Director",
    "Goal",
    "PositionNotFoundError",
    "directed",
    "late",
    "legal_kinds",
    "only_kind",
    "replay",
    "search",
    "tea_offered",
    "tea_then_pass",
]
