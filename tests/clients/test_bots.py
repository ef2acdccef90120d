"""The example bots: greedy takes the best immediate gain, random stays legal, both seeded."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from medina.engine import (
    Action,
    ActionKind,
    GameState,
    Supply,
    apply_action,
    from_picture,
    is_legal,
    legal_moves,
    new_game,
    result,
)
from medina.strategies import scored_actions
from medina_client import LocalStateError, Turn
from medina_client.bots import BOTS, GreedyBot, RandomBot, SearchBot, SeededBot, match_seed

from .fake_arena import request, welcome

# Seat 0 (red) to move in a 4-player medina-v2 game: claiming the orange palace at G7-I7
# (3 buildings + a stable + the orange tile) earns 8, the grey one at C3 earns 2, the
# other 316 placements nothing yet.
PICTURE = """
   A  B  C  D  E  F  G  H  I  J  K  L  M  N  O  P  Q  R
 1 T1 ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ T3
 2 ++ .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
 3 ++ .. g. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
 4 ++ .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
 5 ++ .. .. .. @@ .. .. .. .. .. .. .. .. .. .. .. .. ++
 6 ++ .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
 7 ++ .. .. .. .. .. o. o. o. s. .. .. .. .. .. .. .. ++
 8 ++ .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
 9 ++ .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
10 ++ .. .. .. .. .. .. .. .. .. .. MM .. .. .. .. .. ++
11 ++ .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
12 ++ .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
13 T4 ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ T2
"""


def turn_of(s: GameState, *, legal: bool = True) -> Turn:
    """The Turn the SDK would give the seat to move, with ``s`` as its local state."""
    return Turn(request(s, 1, legal=legal).request, s.to_move, lambda: s)


def gains(s: GameState) -> dict[Action, int]:
    seat = s.to_move
    before = result(s).totals[seat]
    return {
        a: result(apply_action(s, a)).totals[seat] - before
        for a in legal_moves(s).actions()
        if a.kind is not ActionKind.TEA
    }


# Late in the game: every seat holds its four rooftops and two pieces, nothing else.
LATE = {
    seat: Supply(
        buildings=(0, 0, 0, 0),
        rooftops=0b1111,
        neutral=0,
        blocking=0,
        stables=0,
        merchants=1,
        walls=1,
    )
    for seat in range(4)
}


def test_greedy_claims_the_palace_worth_most_late_in_the_game() -> None:
    s = from_picture(PICTURE, "medina-v2", 4, to_move=0, supplies=LATE)
    g = gains(s)
    assert sorted(g.values())[-2:] == [2, 8]
    for seed in range(5):
        assert GreedyBot(seed).choose(turn_of(s)) == Action(ActionKind.ROOFTOP, 114)  # G7


def test_greedy_keeps_its_rooftop_early_rather_than_claim_a_small_palace() -> None:
    s = from_picture(PICTURE, "medina-v2", 4, to_move=0)  # full supplies: the game is young
    chosen = GreedyBot(0).choose(turn_of(s))
    assert chosen.kind is not ActionKind.ROOFTOP


def test_greedy_without_legal_actions_asks_the_engine() -> None:
    s = from_picture(PICTURE, "medina-v2", 4, to_move=0, supplies=LATE)
    assert GreedyBot().choose(turn_of(s, legal=False)) == Action(ActionKind.ROOFTOP, 114)


def test_greedy_plays_a_best_valued_action_and_ties_follow_the_seed() -> None:
    s = new_game("medina-v2", 4, 9)
    rng = random.Random(9)
    while not s.over:
        turn = turn_of(s)
        chosen = GreedyBot(4).choose(turn)
        assert chosen == GreedyBot(4).choose(turn_of(s))  # deterministic per seed
        scored = scored_actions(s)
        assert dict((a, v) for v, a in scored)[chosen] == scored[0][0]
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))


def test_greedy_falls_back_to_a_random_legal_action_without_a_local_state() -> None:
    s = from_picture(PICTURE, "medina-v2", 4, to_move=0)

    def broken() -> GameState:
        raise LocalStateError("history gap")

    turn = Turn(request(s, 1).request, 0, broken)
    for seed in range(5):
        assert is_legal(s, GreedyBot(seed).choose(turn))


def test_random_plays_legal_seeded_actions() -> None:
    s = new_game("medina-v1-2p", 2, 4)
    while not s.over:
        a = RandomBot(3).choose(turn_of(s))
        assert a == RandomBot(3).choose(turn_of(s))
        assert is_legal(s, a)
        assert is_legal(s, RandomBot(3).choose(turn_of(s, legal=False)))
        s = apply_action(s, a)


def test_the_cli_knows_every_example_bot() -> None:
    assert sorted(BOTS) == ["champion", "greedy", "random", "search"]
    assert isinstance(BOTS["greedy"](1), GreedyBot)


def welcomed(bot: SeededBot, seed: int, seat: int) -> SeededBot:
    bot.on_start(welcome(new_game("medina-v1", 3, seed), seat).welcome)
    return bot


@pytest.mark.parametrize("make", [RandomBot, GreedyBot, SearchBot])
def test_a_bot_without_a_seed_is_seeded_by_the_match_and_its_seat(
    make: Callable[..., SeededBot],
) -> None:
    def draws(bot: SeededBot) -> list[float]:
        return [bot.rng.random() for _ in range(3)]

    assert draws(welcomed(make(), 7, 1)) == draws(welcomed(make(), 7, 1))
    assert draws(welcomed(make(), 7, 1)) == draws(SeededBot(match_seed(7, 1)))
    others = {tuple(draws(welcomed(make(), seed, seat))) for seed in (7, 8) for seat in range(4)}
    assert len(others) == 8  # every match seed and seat its own
    assert draws(welcomed(make(5), 7, 1)) == draws(make(5))  # a given seed stays


def test_a_reconnect_does_not_seed_the_bot_again() -> None:
    expected = random.Random(match_seed(7, 1))
    bot = welcomed(RandomBot(), 7, 1)
    assert bot.rng.random() == expected.random()
    welcomed(bot, 7, 1)  # the Welcome of a new stream
    assert bot.rng.random() == expected.random()  # it goes on, it does not start over
