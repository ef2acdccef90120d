"""The champion: legal moves in every ruleset, deterministic for a budget, stops at a deadline
(a fake clock: no timing asserts), keeps to the request's clock in a real match, beats random
on fixed seeds, and refuses bad settings by name. Strength numbers live in the bench."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from medina.engine import GameState, apply_action, is_legal, legal_moves, new_game
from medina.referee.config import MatchSettings, TimeControl
from medina.referee.outcome import Termination
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.strategies import POLICIES, greedy_action
from medina.strategies.champion import (
    DEFAULT_CONFIG,
    MULTIPLAYER_CONFIG,
    ChampionConfig,
    ChampionConfigError,
    Prospects,
    champion_search,
    champion_strategy,
    champion_values,
    default_config,
    relative,
)
from medina.strategies.heuristics import seat_values
from medina_client import play
from medina_client.__main__ import main
from medina_client.bots import BOTS, ChampionBot, RandomBot
from medina_client.bots.champion import TARGET_MS, champion_budget_ms

from .fake_arena import run as run_bounded
from .test_strategies import winners_share

SMALL = ChampionConfig(budget=600, root_width=4, width=3, max_depth=4)
TINY = ChampionConfig(budget=150, root_width=3, width=2, max_depth=3)


def midgame(ruleset: str, players: int, seed: int, decisions: int) -> GameState:
    s = new_game(ruleset, players, seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    return s


@pytest.mark.parametrize(
    ("ruleset", "players"),
    [("medina-v2", 2), ("medina-v2", 4), ("medina-v2", 3), ("medina-v1-2p", 2), ("medina-v1", 3)],
)
def test_the_champion_plays_legal_moves(ruleset: str, players: int) -> None:
    s = new_game(ruleset, players, 3)
    strategy = champion_strategy(SMALL)
    rng = random.Random(3)
    for _ in range(14):
        if s.over:
            break
        action = strategy(s, rng)
        assert is_legal(s, action)
        s = apply_action(s, action)


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 2), ("medina-v2", 4)])
def test_the_champion_is_deterministic_for_a_budget(ruleset: str, players: int) -> None:
    s = midgame(ruleset, players, 11, 30)
    first = champion_search(s, SMALL)
    again = champion_search(s, SMALL)
    assert first == again
    assert is_legal(s, first.action)
    assert first.depth >= 2
    assert first.generated >= len(legal_moves(s))


def test_the_champion_searches_deeper_with_a_larger_budget() -> None:
    s = midgame("medina-v2", 2, 5, 40)
    small = champion_search(s, ChampionConfig(budget=200, max_depth=8))
    large = champion_search(s, ChampionConfig(budget=6000, max_depth=8))
    assert large.depth >= small.depth
    assert large.generated > small.generated


def test_the_champion_stops_at_the_deadline() -> None:
    """A fake clock that moves one second per look: the search must stop, cut short, with a
    legal move (the root is always expanded in full)."""
    s = midgame("medina-v2", 4, 2, 20)
    ticks = iter(range(10**6))
    found = champion_search(
        s,
        ChampionConfig(budget=10**9, max_depth=20),
        deadline=5.0,
        clock=lambda: float(next(ticks)),
    )
    assert found.stopped
    assert is_legal(s, found.action)
    assert found.depth < 20


def test_a_deadline_already_passed_plays_the_evaluations_best_move() -> None:
    s = midgame("medina-v2", 2, 4, 10)
    found = champion_search(s, ChampionConfig(budget=10**9), deadline=0.0, clock=lambda: 1.0)
    assert found.stopped and found.depth == 1 and found.expansions == 1
    assert is_legal(s, found.action)


def test_the_root_can_be_restricted_to_given_actions() -> None:
    s = midgame("medina-v2", 2, 6, 12)
    allowed = legal_moves(s).actions()[-2:]
    found = champion_search(s, SMALL, legal=allowed)
    assert found.action in allowed


def test_the_value_is_the_seat_minus_its_opponents() -> None:
    assert relative([10.0, 4.0], 0, 0.6) == 6.0
    assert relative([10.0, 4.0], 1, 0.6) == -6.0
    assert relative([10.0, 4.0, 6.0, 2.0], 0, 0.5) == pytest.approx(10.0 - (3.0 + 2.0))


def test_claimed_palaces_add_their_prospects_to_greedys_values() -> None:
    s = new_game("medina-v2", 2, 9)
    rng = random.Random(9)
    while not any(p.owner >= 0 for p in s.palaces):
        s = apply_action(s, greedy_action(s, rng))
    assert champion_values(s, prospects=Prospects(0.0, 0.0, 0.0)) == seat_values(s)
    plain = seat_values(s)
    more = champion_values(s)
    owners = {p.owner for p in s.palaces if p.owner >= 0}
    assert all(more[seat] >= plain[seat] for seat in range(2))
    assert any(more[seat] > plain[seat] for seat in owners)


@pytest.mark.parametrize(
    ("ruleset", "seatings"),
    [
        ("medina-v2", [("champion", "random"), ("random", "champion")]),
        ("medina-v2", [("champion", "random") * 2, ("random", "champion") * 2]),
    ],
)
def test_the_champion_beats_random_on_fixed_seeds(
    ruleset: str, seatings: list[tuple[str, ...]]
) -> None:
    strategies = {"random": POLICIES["random"], "champion": champion_strategy(TINY)}
    wins = 0.0
    for names in seatings:
        wins += winners_share(strategies, names, ruleset, 7)["champion"]
    assert wins == len(seatings), f"the champion won {wins} of {len(seatings)} games"


def test_the_champion_is_an_example_bot_and_an_in_process_policy() -> None:
    assert "champion" in BOTS and "champion" in POLICIES


def test_the_champion_searches_narrower_and_deeper_with_more_players() -> None:
    assert default_config(2) == DEFAULT_CONFIG
    assert default_config(3) == default_config(4) == MULTIPLAYER_CONFIG
    assert MULTIPLAYER_CONFIG.root_width < DEFAULT_CONFIG.root_width
    assert MULTIPLAYER_CONFIG.width < DEFAULT_CONFIG.width
    s = midgame("medina-v2", 4, 7, 20)
    assert champion_search(s) == champion_search(s, MULTIPLAYER_CONFIG)
    assert POLICIES["champion"](s, random.Random(0)) == champion_search(s).action
    two = midgame("medina-v2", 2, 7, 20)
    assert champion_search(two) == champion_search(two, DEFAULT_CONFIG)
    # Over the wire the clock bounds the search, with the same widths.
    bot = ChampionBot(0)
    live = bot.config_for(4)
    assert (live.root_width, live.width, live.budget) == (6, 3, 10**9)
    assert bot.config_for(2).root_width == DEFAULT_CONFIG.root_width


def test_the_budget_follows_the_request_clock() -> None:
    assert champion_budget_ms(0) == TARGET_MS  # no clock given: the target
    assert champion_budget_ms(5_000) == TARGET_MS
    assert champion_budget_ms(400) == 170  # half of what is left after the margin
    assert champion_budget_ms(30) == 1  # never zero, never negative
    assert champion_budget_ms(60_000, target_ms=2_000) == 2_000
    # A bank is spread over the pieces still to place: 10 s for 50 pieces is 200 ms each.
    assert champion_budget_ms(5_000, bank_left_ms=10_000, decisions_left=50) == 200
    assert champion_budget_ms(5_000, bank_left_ms=60_000, decisions_left=50) == TARGET_MS
    assert champion_budget_ms(5_000, bank_left_ms=0, decisions_left=5) == 1


def test_bad_settings_are_refused_by_name() -> None:
    with pytest.raises(ChampionConfigError, match="champion budget must be a positive integer"):
        ChampionConfig(budget=0)
    with pytest.raises(ChampionConfigError, match="champion width must be a positive integer"):
        ChampionConfig(width=True)
    with pytest.raises(ChampionConfigError, match="champion budget must be at least 1 ms, got 0"):
        ChampionBot(0, budget_ms=0)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--bot", "champion", "--level", "2"], "--level only applies to --bot search"),
        (["--bot", "champion", "--budget-ms", "0"], "champion budget must be at least 1 ms"),
    ],
)
def test_the_cli_refuses_bad_champion_options(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--server", "127.0.0.1:1", "--token", "T", *argv])
    assert exit_info.value.code == 2
    assert fragment in capsys.readouterr().err


def test_the_champion_keeps_to_the_clock_in_a_real_match(tmp_path: Path) -> None:
    """A tight clock (400 ms a decision, no bank, no grace): the champion searches about
    half of it and no decision times out."""
    clock = TimeControl(decision_ms=400, bank_ms=0, increment_ms=0, grace_ms=0)
    bot = ChampionBot(3)

    async def go() -> None:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 8, time=clock))
            await asyncio.gather(
                play(bot, running.address, hosted.tokens[0]),
                play(RandomBot(1), running.address, hosted.tokens[1]),
            )
            assert hosted.task is not None
            outcome = await hosted.task
        finally:
            await running.stop(1)
        assert outcome.complete
        seat = outcome.seats[0]
        assert seat.termination is Termination.NORMAL, seat.detail
        assert seat.strikes == 0

    run_bounded(go(), timeout=180)
    assert bot.searches > 10
    assert bot.last is not None
