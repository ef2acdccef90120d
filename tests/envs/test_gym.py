"""The Gymnasium environment: Gymnasium's check_env, the opponents, the vector form, seeding
and refusals."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from medina.engine import CONFIGURATIONS, UnknownRulesetError
from medina_client.encoding import PolicyInput
from medina_envs import ENV_ID, IllegalIndexError, MedinaEnv, vector_env

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_gymnasium_check_env(ruleset: str, players: int) -> None:
    check_env(MedinaEnv(ruleset, players, opponents="random"))


def first_legal(obs: PolicyInput) -> int:
    """A policy: the lowest index the mask allows."""
    return int(np.flatnonzero(obs["action_mask"])[0])


@pytest.mark.parametrize("opponents", ["greedy", "search-1", first_legal])
def test_check_env_against_each_kind_of_opponent(opponents: Any) -> None:
    check_env(MedinaEnv("medina-v1-2p", 2, opponents=opponents), skip_render_check=True)


def play(env: MedinaEnv, seed: int) -> tuple[float, int]:
    """One episode of uniformly random legal indices: the final reward and the steps."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    steps = 0
    while True:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, truncated, _ = env.step(action)
        steps += 1
        assert not truncated  # games end by themselves (docs/envs.md): never truncated
        if terminated:
            return float(reward), steps


def test_an_episode_ends_with_the_seats_outcome() -> None:
    env = MedinaEnv("medina-v2", 3, seat=1, opponents=["greedy", "random"])
    reward, steps = play(env, 4)
    assert env.state_of_game.over and steps > 10
    assert reward in (-1.0, -0.5, 0.0, 0.5, 1.0)


def test_the_same_seed_plays_the_same_game() -> None:
    env = MedinaEnv("medina-v2", 2, opponents="greedy", render_mode="ansi")
    outcomes = []
    for _ in range(2):
        outcomes.append((play(env, 11), env.render()))
    assert outcomes[0] == outcomes[1]


def test_a_random_learning_seat_moves_with_the_seed() -> None:
    env = MedinaEnv("medina-v2", 4, seat=None)
    seats = {env.reset(seed=seed)[1]["seat"] for seed in range(12)}
    assert seats == {0, 1, 2, 3}
    obs, info = env.reset(seed=3)
    assert env.state_of_game.to_move == info["seat"]
    assert obs["action_mask"].any()


def test_an_illegal_index_loses_or_raises() -> None:
    env = MedinaEnv("medina-v2", 2)
    obs, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert (reward, terminated) == (-1.0, True)
    assert "is not legal for the learning seat 0" in info["illegal"]
    strict = MedinaEnv("medina-v2", 2, illegal="raise")
    strict.reset(seed=1)
    with pytest.raises(IllegalIndexError):
        strict.step(illegal)


def test_the_registered_id_makes_the_env() -> None:
    env = gymnasium.make(ENV_ID, ruleset="medina-v1", players=3, opponents="gain")
    obs, _ = env.reset(seed=2)
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_vector_form_restarts_finished_games_in_the_same_step(mode: Any) -> None:
    envs = vector_env(2, mode, players=2)
    try:
        obs, _ = envs.reset(seed=5)
        assert obs["observation"]["planes"].shape == (2, 25, 13, 18)
        rng = np.random.default_rng(5)
        finished = 0
        for _ in range(400):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
            obs, _, terminated, _, _ = envs.step(actions)
            finished += int(terminated.sum())
            assert obs["action_mask"].any(axis=1).all()  # every game has a move to make
            if finished >= 2:
                break
        assert finished >= 2
    finally:
        envs.close()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(UnknownRulesetError):
        MedinaEnv("medina", 2)
    with pytest.raises(ValueError, match="seat 2 is not a seat of a 2-player game"):
        MedinaEnv(players=2, seat=2)
    with pytest.raises(ValueError, match="2 opponents given for 3 other seats"):
        MedinaEnv(players=4, opponents=["random", "greedy"])
    with pytest.raises(ValueError, match="unknown opponent 'grumpy'"):
        MedinaEnv(opponents="grumpy")
    with pytest.raises(ValueError, match="illegal must be 'lose' or 'raise'"):
        MedinaEnv(illegal="ignore")  # type: ignore[arg-type]


def test_after_an_illegal_loss_the_episode_is_over_until_reset() -> None:
    env = MedinaEnv("medina-v2", 2)
    obs, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    assert env.step(illegal)[2] is True
    legal = int(np.flatnonzero(env.action_masks())[0])
    with pytest.raises(RuntimeError, match="the episode is over: call reset"):
        env.step(legal)  # the lost game went no further
    obs, _ = env.reset(seed=1)
    assert env.step(int(np.flatnonzero(obs["action_mask"])[0]))[2] is False


@pytest.mark.parametrize("illegal", ["lose", "raise"])
def test_an_action_outside_the_space_raises_in_either_mode(illegal: Any) -> None:
    env = MedinaEnv("medina-v2", 2, illegal=illegal)
    obs, _ = env.reset(seed=1)
    legal = int(np.flatnonzero(obs["action_mask"])[1])  # not 1, so True is no legal index
    assert legal != 1
    for action in (float(legal), True, np.array([legal]), np.float64(legal)):
        with pytest.raises(IllegalIndexError, match="is not an action index"):
            env.step(action)  # type: ignore[arg-type]
    for action in (-1, 2575):
        with pytest.raises(IllegalIndexError, match=f"action index {action} is outside 0..2574"):
            env.step(action)
    assert env.state_of_game.decisions == 0  # nothing was played


def test_every_index_the_action_space_holds_is_taken() -> None:
    """An int, a numpy integer and a 0-d numpy integer array (``Discrete.contains`` holds
    all three) play the same game."""
    finals = []
    for kind in (int, np.int32, np.int16, np.array):
        env = MedinaEnv("medina-v2", 2, opponents="greedy")
        obs, _ = env.reset(seed=6)
        while True:
            index = int(np.flatnonzero(obs["action_mask"])[-1])
            action = kind(index)
            assert env.action_space.contains(action)
            obs, reward, terminated, _, info = env.step(action)
            assert "illegal" not in info
            if terminated:
                break
        finals.append((reward, env.state_of_game.decisions))
    assert len(set(finals)) == 1


def test_an_opponent_policy_returning_a_bool_is_refused_as_play_policy_refuses_it() -> None:
    env = MedinaEnv("medina-v1-2p", 2, seat=1, opponents=lambda obs: True)
    with pytest.raises(IllegalIndexError, match="opponent policy in seat 0 is to move: True"):
        env.reset(seed=1)


def test_human_mode_shows_the_board_as_the_episode_goes(capsys: pytest.CaptureFixture[str]) -> None:
    """Gymnasium's "human" mode renders in reset and step, with no render() call."""
    env = MedinaEnv("medina-v2", 2, render_mode="human")
    obs, _ = env.reset(seed=3)
    shown = capsys.readouterr().out
    assert shown and shown.count("\n") >= 10
    env.step(first_legal(obs))
    assert capsys.readouterr().out.count("\n") >= 10
    quiet = MedinaEnv("medina-v2", 2, render_mode="ansi")
    obs, _ = quiet.reset(seed=3)
    quiet.step(first_legal(obs))
    assert capsys.readouterr().out == ""


def test_a_pickled_env_plays_on_the_same_game() -> None:
    """After reset the opponents pickle (named strategies with their generators, a module
    level policy), and the restored env continues the original's trajectory."""
    env = MedinaEnv("medina-v2", 4, seat=None, opponents=["random", "greedy", first_legal])
    obs, _ = env.reset(seed=4)
    for _ in range(5):
        obs, *_ = env.step(first_legal(obs))
    twin: MedinaEnv = pickle.loads(pickle.dumps(env))
    games = []
    for e in (env, twin):
        o, terminated = obs, False
        while not terminated:
            o, reward, terminated, *_ = e.step(first_legal(o))
        games.append((e.state_of_game.events, reward))
    assert games[0] == games[1]
