"""The PettingZoo AEC environment: PettingZoo's own API, seed and render tests for every
configuration, hidden information, rewards and refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from medina.engine import CONFIGURATIONS, PlayerCountError, UnknownRulesetError, render
from medina_client.encoding import SEAT_OFFSET, VECTOR_OFFSET
from medina_envs import IllegalIndexError, MedinaAECEnv, MedinaEnv, aec_env
from medina_envs.core import encoder
from medina_envs.spiel import MedinaGame
from pettingzoo.test.api_test import api_test
from pettingzoo.test.render_test import render_test
from pettingzoo.test.seed_test import seed_test
from pettingzoo.utils.conversions import aec_to_parallel

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_pettingzoo_api_test(ruleset: str, players: int) -> None:
    api_test(aec_env(ruleset, players), num_cycles=1000)  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_pettingzoo_seed_test(ruleset: str, players: int) -> None:
    seed_test(lambda: aec_env(ruleset, players), num_cycles=1000)  # type: ignore[no-untyped-call]


def test_pettingzoo_api_test_on_the_wire_observer() -> None:
    env = aec_env("medina-v1-2p", 2, observer="wire")
    api_test(env, num_cycles=1000)  # type: ignore[no-untyped-call]


def test_pettingzoo_render_test() -> None:
    def make(render_mode: str | None = None) -> MedinaAECEnv:
        return aec_env("medina-v2", 2, render_mode=render_mode)

    render_test(make)  # type: ignore[arg-type]  # it passes render_mode


def play_out(env: MedinaAECEnv, seed: int) -> dict[str, float]:
    """Play uniformly random legal indices to the end; the returns per agent."""
    rng = np.random.default_rng(seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    wire = encoder("wire")
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        assert obs is not None
        returns[agent] += reward
        for other in env.agents:  # every agent sees what the arena would send its seat
            seat = int(other.split("_")[1])
            sent = wire(env.state_of_game, seat)
            seen = env.observe(other)
            np.testing.assert_array_equal(seen["observation"]["planes"], sent.planes)
            np.testing.assert_array_equal(seen["observation"]["vector"], sent.vector)
            np.testing.assert_array_equal(seen["action_mask"], sent.mask)
        assert not truncated  # games end by themselves (docs/envs.md): never truncated
        if terminated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return returns


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 3), ("medina-v1-2p", 2)])
def test_agents_see_what_the_arena_would_send_them(ruleset: str, players: int) -> None:
    env = aec_env(ruleset, players)
    env.reset(seed=5)
    returns = play_out(env, 5)
    assert sum(returns.values()) == pytest.approx(0.0)
    assert all(-1.0 <= r <= 1.0 for r in returns.values())
    if players == 2:
        assert sorted(returns.values()) in ([-1.0, 1.0], [0.0, 0.0])


def test_other_supplies_stay_hidden() -> None:
    env = aec_env("medina-v2", 4)
    env.reset(seed=1)
    vector = env.observe("seat_2")["observation"]["vector"]
    known = [VECTOR_OFFSET[f"seat_{k}"] + SEAT_OFFSET["supply_known"] for k in range(4)]
    assert list(vector[known]) == [1, 0, 0, 0]
    assert not env.observe("seat_2")["action_mask"].any()  # seat 0 is to move
    assert env.observe("seat_0")["action_mask"].any()


def test_the_same_seed_plays_the_same_game() -> None:
    boards = []
    for _ in range(2):
        env = aec_env("medina-v2", 2, render_mode="ansi")
        env.reset(seed=9)
        play_out(env, 9)
        boards.append(env.render())
    env.reset(seed=10)
    assert boards[0] == boards[1] != env.render()


def test_an_index_outside_the_mask_is_refused() -> None:
    env = aec_env("medina-v2", 3)
    env.reset(seed=2)
    mask = env.observe("seat_0")["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalIndexError, match=f"action {illegal} .* is not legal for seat_0"):
        env.step(illegal)
    with pytest.raises(IllegalIndexError, match="not an action index"):
        env.step(None)
    assert env.agent_selection == "seat_0"  # nothing happened


def test_bad_configurations_are_refused() -> None:
    with pytest.raises(UnknownRulesetError):
        aec_env("medina-v3", 2)
    with pytest.raises(PlayerCountError):
        aec_env("medina-v1", 2)
    with pytest.raises(ValueError, match="render_mode must be one of"):
        aec_env(render_mode="svg")
    with pytest.raises(ValueError, match="observer must be 'fast' or 'wire'"):
        aec_env(observer="slow")  # type: ignore[arg-type]


@pytest.mark.parametrize(("players", "shape"), [(2, (240, 320, 3)), (4, (260, 360, 3))])
def test_the_rgb_image_has_a_square_per_square(players: int, shape: tuple[int, ...]) -> None:
    env = aec_env("medina-v2", players, render_mode="rgb_array")
    env.reset(seed=3)
    image = env.render()
    assert isinstance(image, np.ndarray) and image.shape == shape and image.dtype == np.uint8


def test_an_index_is_an_integer_or_a_0d_integer_array_never_a_bool() -> None:
    env = aec_env("medina-v2", 2)
    env.reset(seed=2)
    mask = env.observe("seat_0")["action_mask"]
    legal = int(np.flatnonzero(mask)[1])
    assert legal != 1 and mask[1] == 0  # so True, were it taken for 1, is refused as illegal
    for action in (True, float(legal), np.array([legal])):
        with pytest.raises(IllegalIndexError, match="is not an action index"):
            env.step(action)  # type: ignore[arg-type]
    assert env.state_of_game.decisions == 0
    env.step(np.array(legal))  # type: ignore[arg-type]  # what Discrete.contains holds
    assert env.state_of_game.decisions == 1


def test_before_reset_and_after_the_end_the_refusal_says_so() -> None:
    env = aec_env("medina-v1-2p", 2)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        env.last()
    env.reset(seed=4)
    play_out(env, 4)
    assert env.agents == []
    for call in (lambda: env.step(None), lambda: env.step(0), env.last):
        with pytest.raises(RuntimeError, match="every agent has stepped: call reset"):
            call()
    env.reset(seed=4)
    assert env.last()[0] is not None


def test_human_mode_shows_the_board_as_the_game_goes(capsys: pytest.CaptureFixture[str]) -> None:
    env = aec_env("medina-v2", 2, render_mode="human")
    env.reset(seed=3)
    assert capsys.readouterr().out.count("\n") >= 10
    obs, *_ = env.last()
    assert obs is not None
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert capsys.readouterr().out.count("\n") >= 10


@pytest.mark.parametrize("players", ["2", 2.0, True])
def test_a_player_count_that_is_not_an_int_is_refused_by_every_env(players: Any) -> None:
    """One check (``core.check_configuration``) for the AEC, Gymnasium and OpenSpiel
    constructors: the count's type is named, not taken for an unsupported count."""
    name = type(players).__name__
    makers: list[Callable[[str, Any], object]] = [
        aec_env,
        MedinaEnv,
        lambda ruleset, n: MedinaGame({"ruleset": ruleset, "players": n}),
    ]
    for make in makers:
        with pytest.raises(TypeError, match=f"players must be an int, not {name} {players!r}"):
            make("medina-v2", players)


def seeders() -> list[Callable[..., object]]:
    """Every environment's ``reset(seed=...)`` (OpenSpiel's game takes no seed)."""
    return [aec_env("medina-v2", 2).reset, MedinaEnv("medina-v2", 2).reset]


@pytest.mark.parametrize("seed", [np.int64(5), np.uint32(5), np.int8(5)])
def test_a_numpy_integer_seed_plays_the_game_of_its_int(seed: Any) -> None:
    for make in (lambda: aec_env("medina-v2", 2), lambda: MedinaEnv("medina-v2", 2, seat=None)):
        games = []
        for given in (5, seed):
            env = make()
            env.reset(seed=given)
            s = env.state_of_game
            games.append((s.seed, render(s), getattr(env, "seat", None)))
        assert games[0] == games[1]


@pytest.mark.parametrize("seed", ["7", 1.5, True, np.float64(7), np.bool_(True), [7]])
def test_a_seed_that_is_not_an_int_is_refused_by_every_env(seed: Any) -> None:
    """One check (``core.checked_seed``) for every env that takes a seed: '7' is not 7."""
    name = type(seed).__name__
    for reset in seeders():
        with pytest.raises(TypeError, match=rf"seed must be an int or None, not {name} "):
            reset(seed=seed)


def test_a_negative_seed_is_refused_by_every_env_as_gymnasium_refuses_it() -> None:
    for reset in seeders():
        for seed in (-3, np.int64(-1)):
            with pytest.raises(ValueError, match=f"seed must not be negative, not {int(seed)}"):
                reset(seed=seed)
    aec_env("medina-v2", 2).reset(seed=0)  # 0 is a seed like any other


@pytest.mark.parametrize("seat", [1.0, "1", True, np.float32(1)])
def test_a_seat_that_is_not_an_int_is_refused_when_the_env_is_made(seat: Any) -> None:
    """The learning seat is checked as the player count is (``core.checked_int``)."""
    name = type(seat).__name__
    with pytest.raises(TypeError, match=f"seat must be an int or None, not {name} "):
        MedinaEnv("medina-v2", 2, seat=seat)


def test_a_numpy_integer_seat_is_taken_as_its_int() -> None:
    env = MedinaEnv("medina-v2", 3, seat=np.int64(2))
    _, info = env.reset(seed=1)
    assert info["seat"] == 2 and type(info["seat"]) is int


def test_there_is_no_parallel_api_the_game_is_sequential() -> None:
    env = aec_env("medina-v2", 2)
    assert env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(env)
