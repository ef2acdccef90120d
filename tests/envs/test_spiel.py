"""The OpenSpiel game: OpenSpiel's random-simulation test for every configuration, the
setup's chance nodes, observations and the MCTS example."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from medina.engine import CONFIGURATIONS, PlayerCountError, get_ruleset, new_game
from medina.engine.geometry import squares
from medina_envs.examples.spiel_mcts import play_game
from medina_envs.observer import encode_state
from medina_envs.spiel import OBSERVATION_SIZE, MedinaState, load


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_openspiel_random_sim_test(ruleset: str, players: int) -> None:
    pyspiel.random_sim_test(load(ruleset, players), num_sims=2, serialize=False, verbose=False)


def test_openspiel_random_sim_test_with_serialization() -> None:
    pyspiel.random_sim_test(load("medina-v2", 3), num_sims=1, serialize=True, verbose=False)


def test_the_setup_is_two_chance_nodes_as_the_arena_draws_them() -> None:
    game = load("medina-v2", 4)
    inner = squares(get_ruleset("medina-v2", 4).geometry.inner)
    state = game.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == inner
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    well = inner[5]
    state.apply_action(well)
    assert state.is_chance_node() and well not in [a for a, _ in state.chance_outcomes()]
    state.apply_action(inner[9])
    assert state.current_player() == 0
    s = state.engine_state
    expected = new_game("medina-v2", 4, 0, well=well, start_merchant=inner[9])
    assert s is not None and (s.well, s.merchants) == (expected.well, expected.merchants)


def test_the_first_editions_start_at_the_first_decision() -> None:
    state = load("medina-v1", 3).new_initial_state()
    assert state.current_player() == 0
    assert all("start merchant" in state.action_to_string(0, a) for a in state.legal_actions())


def test_observations_are_the_encoding_and_information_states_the_history() -> None:
    game = load("medina-v1-2p", 2)
    assert game.observation_tensor_size() == OBSERVATION_SIZE
    state: MedinaState = game.new_initial_state()
    rng = np.random.default_rng(3)
    while not state.is_terminal():
        s = state.engine_state
        assert s is not None
        for player in range(2):
            enc = encode_state(s, player)
            expected = np.concatenate([enc.planes.ravel(), enc.vector]).astype(np.float32)
            np.testing.assert_array_equal(np.array(state.observation_tensor(player)), expected)
        history = " ".join(map(str, state.history()))
        assert state.information_state_string(1) == f"seat 1, history [{history}]"
        state.apply_action(int(rng.choice(state.legal_actions())))
    returns = state.returns()
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(PlayerCountError):
        load("medina-v1-2p", 3)


@pytest.mark.parametrize("evaluator", ["rollout", "heuristic"])
def test_mcts_plays_a_game_against_the_example_bots(evaluator: str) -> None:
    outcome = play_game("medina-v2", 2, 1, ["greedy"], simulations=2, seed=4, evaluator=evaluator)
    assert sum(outcome) == pytest.approx(0.0) and len(outcome) == 2
