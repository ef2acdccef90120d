"""The environments' fast encoding (medina_envs.observer) is the reference encoding of the
messages the arena sends (medina_client.encoding over medina.wire), at every decision of
seeded games of every configuration, for every seat; and the mask is the legal list."""

from __future__ import annotations

import random

import numpy as np
import pytest
from medina.engine import (
    CONFIGURATIONS,
    GameState,
    apply_action,
    legal_actions,
    legal_moves,
    new_game,
    observe,
)
from medina.strategies import gain_action, random_action
from medina.v1 import game_pb2
from medina.wire.shared.legal import legal_bytes
from medina.wire.shared.observation import observation_bytes
from medina_client.encoding import Encoded, action_of_index, encode
from medina_envs.observer import Observer, encode_state

SEEDS = (1, 2, 3)


def from_the_wire(s: GameState, seat: int) -> Encoded:
    """What a bot in ``seat`` builds from the bytes the server would send it now."""
    obs = game_pb2.Observation.FromString(observation_bytes(observe(s, seat, since=s.n_events)))
    if s.over or s.to_move != seat:
        return encode(obs)
    return encode(obs, game_pb2.LegalActions.FromString(legal_bytes(legal_moves(s))))


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_in_process_equals_the_wire_at_every_decision(
    ruleset: str, players: int, seed: int
) -> None:
    s = new_game(ruleset, players, seed)
    rng = random.Random(seed)
    decisions = 0
    while True:
        for seat in range(players):
            fast, wire = encode_state(s, seat), from_the_wire(s, seat)
            where = f"{ruleset}/{players} seed {seed} decision {decisions} seat {seat}"
            np.testing.assert_array_equal(fast.planes, wire.planes, err_msg=where)
            np.testing.assert_array_equal(fast.vector, wire.vector, err_msg=where)
            np.testing.assert_array_equal(fast.mask, wire.mask, err_msg=where)
        if s.over:
            break
        mask = encode_state(s, s.to_move).mask
        cols, rows = s.rules.geometry.cols, s.rules.geometry.rows
        listed = [action_of_index(int(i), cols, rows) for i in np.flatnonzero(mask)]
        assert sorted(listed, key=repr) == sorted(legal_actions(s), key=repr)
        strategy = gain_action if s.to_move == 0 else random_action
        s = apply_action(s, strategy(s, rng))
        decisions += 1
    assert decisions > 20


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_the_environments_observer_equals_encode_state_in_any_order(
    ruleset: str, players: int
) -> None:
    """``Observer`` (what an environment keeps: it remembers the state it saw last) gives
    ``encode_state``'s tensors computed afresh, whatever it saw before: the seat to move at
    every decision, other seats, a state of another game, earlier states of this one; and an
    agent changing an observation in place changes nothing after."""
    observer = Observer()
    rng = random.Random(ruleset)
    for seed in SEEDS:
        s = new_game(ruleset, players, seed)
        seen = [s]
        while True:
            views = [(s, s.to_move), (s, rng.randrange(players))]
            if rng.random() < 0.1:
                views.append((rng.choice(seen), rng.randrange(players)))
            for x, seat in views:
                got, expected = observer(x, seat), encode_state(x.copy(), seat)  # copy: unscored
                where = f"{ruleset}/{players} seed {seed} decision {x.decisions} seat {seat}"
                np.testing.assert_array_equal(got.planes, expected.planes, err_msg=where)
                np.testing.assert_array_equal(got.vector, expected.vector, err_msg=where)
                np.testing.assert_array_equal(got.mask, expected.mask, err_msg=where)
                got.planes[:] = 1  # what an agent may do with its own arrays
                got.vector[:] = -1.0
                got.mask[:] = 1
            if s.over:
                break
            strategy = gain_action if s.to_move == 0 else random_action
            s = apply_action(s, strategy(s, rng))
            seen.append(s)
