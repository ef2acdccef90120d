"""The OpenSpiel game: OpenSpiel's random-simulation test for every configuration, the
setup's chance nodes, observations and the MCTS example."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from medina.engine import (
    CONFIGURATIONS,
    Action,
    ActionKind,
    IllegalActionError,
    PlayerCountError,
    describe_supply,
    get_ruleset,
    is_legal,
    new_game,
)
from medina.engine.geometry import squares
from medina_client.encoding import action_index
from medina_envs.examples.spiel_mcts import play_game
from medina_envs.observer import encode_state
from medina_envs.spiel import OBSERVATION_SIZE, MedinaGame, MedinaState, load
from open_spiel.python.observation import make_observation


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


def test_a_parameter_of_the_wrong_type_is_refused_by_openspiel_itself() -> None:
    """docs/envs.md: pyspiel checks the types against the specification before the game's
    own check (MedinaGame made directly raises TypeError)."""
    with pytest.raises(pyspiel.SpielError, match="Wrong type for parameter players"):
        pyspiel.load_game("python_medina", {"players": "3"})
    with pytest.raises(TypeError, match="players must be an int, not str '3'"):
        MedinaGame({"players": "3"})


@pytest.mark.parametrize("evaluator", ["rollout", "heuristic"])
def test_mcts_plays_a_game_against_the_example_bots(evaluator: str) -> None:
    outcome = play_game("medina-v2", 2, 1, ["greedy"], simulations=2, seed=4, evaluator=evaluator)
    assert sum(outcome) == pytest.approx(0.0) and len(outcome) == 2


def test_a_chance_outcome_off_the_list_is_refused_and_changes_nothing() -> None:
    state = load("medina-v2", 2).new_initial_state()
    with pytest.raises(ValueError, match="0 is not a chance outcome here: the well goes on"):
        state.apply_action(0)  # a tower's square, not the inner city
    assert state.history() == [] and state.is_chance_node()
    well = state.chance_outcomes()[0][0]
    state.apply_action(well)
    with pytest.raises(ValueError, match=rf"start merchant .* other than the well's \({well}\)"):
        state.apply_action(well)
    assert state.history() == [well] and state.is_chance_node()


def test_each_observation_kind_holds_only_what_it_allows() -> None:
    """OpenSpiel's factored observations (as generate_playthrough asks for them): the public
    one holds no seat's supply, a seat's private one only its own."""
    game = load("medina-v1-2p", 2)
    state = game.new_initial_state()
    rng = np.random.default_rng(2)
    for _ in range(6):
        state.apply_action(int(rng.choice(state.legal_actions())))
    s = state.engine_state
    assert s is not None and s.revealed == 0

    def kind(public: bool, private: pyspiel.PrivateInfoType, recall: bool = False) -> object:
        iig = pyspiel.IIGObservationType(
            public_info=public, perfect_recall=recall, private_info=private
        )
        return make_observation(game, iig)

    single, none, every = (
        pyspiel.PrivateInfoType.SINGLE_PLAYER,
        pyspiel.PrivateInfoType.NONE,
        pyspiel.PrivateInfoType.ALL_PLAYERS,
    )
    public = kind(True, none)
    assert public.tensor is None  # type: ignore[attr-defined]
    text = public.string_from(state, 0)  # type: ignore[attr-defined]
    assert text == public.string_from(state, 1)  # type: ignore[attr-defined]
    assert "supply" not in text and text.startswith(str(state))
    for seat in (0, 1):
        private = kind(False, single).string_from(state, seat)  # type: ignore[attr-defined]
        assert private == f"seat {seat}: supply {describe_supply(s.supply_of(seat))}"
        # in words, the rooftops by the colours they can claim (once a bare bit mask)
        assert "Supply(" not in private and "; rooftops " in private
    both = kind(True, every).string_from(state, 0)  # type: ignore[attr-defined]
    assert f"seat 1: supply {describe_supply(s.supply_of(1))}" in both
    default = kind(True, single)
    assert default.tensor is not None and len(default.tensor) == OBSERVATION_SIZE  # type: ignore[attr-defined]
    assert kind(False, none, recall=True).string_from(state, 0) == ""  # type: ignore[attr-defined]


def test_the_public_observation_holds_the_supplies_shown_after_running_low() -> None:
    game = load("medina-v1-2p", 2)
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    s = state.engine_state
    while s is not None and not s.over and s.revealed == 0:
        state.apply_action(int(rng.choice(state.legal_actions())))
        s = state.engine_state
    assert s is not None and s.revealed != 0, "no supply was shown in this game"
    iig = pyspiel.IIGObservationType(
        public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE
    )
    text = make_observation(game, iig).string_from(state, 0)
    shown = [k for k in range(2) if (s.revealed >> k) & 1]
    assert [line for line in text.splitlines() if "supply" in line] == [
        f"seat {k}: supply {describe_supply(s.supply_of(k))} (shown)" for k in shown
    ]


def test_the_observation_string_holds_a_supply_shown_as_the_tensor_does() -> None:
    """OpenSpiel wants the string and the tensor to carry the same information: the other
    seat's supply, once medina-v1-2p has shown it (the tensor's seat slot holds it), is in
    the string too, marked as shown."""
    game = load("medina-v1-2p", 2)
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    s = state.engine_state
    while s is not None and not s.over and s.revealed == 0:
        assert "(shown)" not in state.observation_string(0) + state.observation_string(1)
        state.apply_action(int(rng.choice(state.legal_actions())))
        s = state.engine_state
    assert s is not None and s.revealed != 0, "no supply was shown in this game"
    for seat in range(2):
        other = 1 - seat
        lines = state.observation_string(seat).splitlines()
        expected = f"seat {other}: supply {describe_supply(s.supply_of(other))} (shown)"
        assert (expected in lines) == bool((s.revealed >> other) & 1)
        assert f"seat {seat}: turn {s.turn}, supply " in "\n".join(lines)
        assert not any(line.startswith(f"seat {seat}: supply") for line in lines)


def test_an_action_id_off_legal_actions_is_refused_though_the_engine_takes_it() -> None:
    """A palace's rooftop has one id (at the building square the list names); another of its
    building squares reaches the same position, so OpenSpiel must refuse it."""
    state = load("medina-v2", 2).new_initial_state()
    rng = np.random.default_rng(1)
    while True:
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
            continue
        s = state.engine_state
        assert s is not None and not s.over, "no palace of several buildings to claim"
        g = s.rules.geometry
        listed = state.legal_actions()
        roofs = [Action(ActionKind.ROOFTOP, sq) for sq in range(g.cols * g.rows)]
        aliases = [
            i
            for a in roofs
            if is_legal(s, a) and (i := action_index(a, g.cols, g.rows)) not in listed
        ]
        if aliases:
            break
        state.apply_action(int(rng.choice(listed)))
    history = state.history()
    with pytest.raises(IllegalActionError, match=f"action {aliases[0]} .* legal_actions") as info:
        state.apply_action(aliases[0])
    assert info.value.rule == "illegal"
    assert state.history() == history and state.engine_state is s


def test_an_action_off_the_space_is_an_illegal_action_naming_the_range() -> None:
    state = load("medina-v1", 3).new_initial_state()
    for action in (2575, -2):
        with pytest.raises(
            IllegalActionError, match=f"action index {action} is outside 0..2574"
        ) as off:
            state.apply_action(action)
        assert off.value.rule == "bad-action"
    with pytest.raises(pyspiel.SpielError, match="kInvalidAction"):
        state.apply_action(-1)  # OpenSpiel's own invalid action, refused before the game
    assert state.history() == []
    with pytest.raises(IllegalActionError, match="start merchant") as info:
        state.apply_action(0)  # a building, not the start merchant: the engine names the rule
    assert info.value.rule == "start-merchant"
