"""Every scenario's scripted position offers what its check claims, for several seeds."""

from __future__ import annotations

import pytest
from medina.checkbot import positions
from medina.checkbot.positions import PositionNotFoundError, legal_kinds
from medina.checkbot.scenarios import CHECKS, CheckOptions, Scenario, tea_first_policy
from medina.engine import Action, ActionKind, EventKind, GameState, apply_action, legal_moves
from medina.engine.movegen import placements

SEEDS = (1, 2, 7)
KIND_CHECKS = [name for name in CHECKS if name.startswith("kind-")]


def build(name: str, seed: int) -> Scenario:
    return CHECKS[name](CheckOptions(seed=seed))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", [n for n in KIND_CHECKS if n != "kind-tea"])
def test_a_kind_position_offers_only_that_kind_to_the_bot(name: str, seed: int) -> None:
    scenario = build(name, seed)
    s = scenario.start()
    assert scenario.kind is not None
    assert name == "kind-" + scenario.kind.name.lower().replace("_", "-")
    assert s.to_move == scenario.bot and not s.over
    assert legal_kinds(legal_moves(s)) == {scenario.kind}


def test_every_action_kind_of_the_engine_has_a_check() -> None:
    kinds = {build(name, 1).kind for name in KIND_CHECKS}
    assert kinds == set(ActionKind)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_tea_position_offers_a_tea_break_among_few_actions(seed: int) -> None:
    scenario = build("kind-tea", seed)
    s = scenario.start()
    moves = legal_moves(s)
    assert s.to_move == scenario.bot and moves.tea and 2 <= len(moves) <= 3
    assert ActionKind.TEA in legal_kinds(moves)


def events_until_bot_asked(scenario: Scenario) -> tuple[GameState, list[EventKind], list[int]]:
    """Play the opponents' policies from the start position until the bot must decide."""
    s = scenario.start()
    first = s.n_events
    policies = scenario.local_policies()
    while s.to_move != scenario.bot and not s.over:
        s = apply_action(s, policies[s.to_move](s, None))  # type: ignore[arg-type]
    events = s.events_since(first)
    return s, [e.kind for e in events], [e.seat for e in events]


@pytest.mark.parametrize("seed", SEEDS)
def test_tea_and_pass_brings_a_tea_break_and_a_pass_before_the_bots_request(seed: int) -> None:
    scenario = build("tea-and-pass", seed)
    assert scenario.opponents[1] == "tea-first"
    s, kinds, seats = events_until_bot_asked(scenario)
    assert not s.over and s.to_move == scenario.bot
    tea = kinds.index(EventKind.TEA_SPENT)
    passed = kinds.index(EventKind.PASSED)
    assert (seats[tea], seats[passed]) == (1, 2) and tea < passed
    assert placements(s, 2).has_placement() is False


@pytest.mark.parametrize("seed", SEEDS)
def test_match_end_starts_late_with_the_bot_to_move(seed: int) -> None:
    scenario = build("match-end", seed)
    s = scenario.start()
    assert s.to_move == scenario.bot and not s.over
    assert len(scenario.opening) > 60  # late: the match is short


def test_the_other_scenarios_start_from_the_setup() -> None:
    for name in ("rejection-retry", "tight-clock", "reconnect"):
        scenario = build(name, 1)
        assert scenario.opening == () and scenario.start().decisions == 0


def test_openings_are_legal_from_the_match_setup_and_reproducible() -> None:
    for name in CHECKS:
        scenario = build(name, 3)
        assert build(name, 3).opening == scenario.opening  # deterministic
        settings = scenario.settings()
        assert (settings.ruleset, settings.players, settings.seed) == (
            scenario.ruleset,
            scenario.players,
            3,
        )
        scenario.start()  # replays without IllegalActionError


def test_different_seeds_give_different_positions() -> None:
    assert build("kind-wall", 1).opening != build("kind-wall", 2).opening


def test_a_search_that_cannot_succeed_says_so() -> None:
    def never(_s: GameState) -> bool:
        return False

    def first(_s: GameState, actions: list[Action], _rng: object) -> Action:
        return actions[0]

    with pytest.raises(PositionNotFoundError, match="no nothing position in 300 medina-v2"):
        positions.search("medina-v2", 2, 1, tag="nothing", director=first, goal=never)


def test_tea_then_pass_needs_three_players() -> None:
    with pytest.raises(ValueError, match="3 or more players, got 2"):
        positions.tea_then_pass("medina-v2", 2, 1, 0)


def test_tea_first_takes_the_tea_break_when_offered() -> None:
    s = build("tea-and-pass", 1).start()
    assert tea_first_policy(0)(s, None).kind is ActionKind.TEA  # type: ignore[arg-type]
