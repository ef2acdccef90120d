"""The reference strategies: greedy beats random, each search level searches to its depth
deterministically, keeps to its time budget in a real match, explains itself with --verbose,
and refuses bad levels and budgets by name."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from pathlib import Path

import pytest
from medina.engine import apply_action, is_legal, legal_moves, new_game, result
from medina.referee.config import MatchSettings, TimeControl
from medina.referee.outcome import Termination
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.strategies import POLICIES, Strategy
from medina.strategies.champion import champion_search, champion_values, relative
from medina.strategies.heuristics import DEFAULT_WEIGHTS
from medina.strategies.search import LEVELS, SearchLevelError, level_config, search_strategy
from medina_client import play
from medina_client.__main__ import main
from medina_client.bots import BOTS, RandomBot, SearchBot

from .fake_arena import FakeStream, ended, fake_server, request, welcome
from .fake_arena import run as run_bounded


def winners_share(
    strategies: dict[str, Strategy], names: tuple[str, ...], ruleset: str, seed: int
) -> dict[str, float]:
    """Play one game in process; each name's share of first place."""
    s = new_game(ruleset, len(names), seed)
    rngs = [random.Random(seed * 31 + i) for i in range(len(names))]
    while not s.over:
        s = apply_action(s, strategies[names[s.to_move]](s, rngs[s.to_move]))
    ranks = result(s).ranks
    firsts = [i for i, r in enumerate(ranks) if r == 1]
    share = dict.fromkeys(names, 0.0)
    for i in firsts:
        share[names[i]] += 1 / len(firsts)
    return share


@pytest.mark.parametrize(
    ("ruleset", "seatings", "wins_at_least"),
    [
        ("medina-v2", [("greedy", "random") * 2, ("random", "greedy") * 2], 7.0),
        ("medina-v1-2p", [("greedy", "random"), ("random", "greedy")], 8.0),
    ],
)
def test_greedy_beats_random_on_fixed_seeds(
    ruleset: str, seatings: list[tuple[str, ...]], wins_at_least: float
) -> None:
    wins = 0.0
    for seed in range(4):
        for names in seatings:
            wins += winners_share(POLICIES, names, ruleset, seed)["greedy"]
    assert wins >= wins_at_least, f"greedy won {wins} of {4 * len(seatings)} games"


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 4), ("medina-v1-2p", 2)])
def test_each_level_searches_to_its_depth_and_no_further(ruleset: str, players: int) -> None:
    s = new_game(ruleset, players, 21)
    rng = random.Random(21)
    for _ in range(40):
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    for level, config in LEVELS.items():
        found = champion_search(s, config)
        assert found == champion_search(s, config), f"level {level} is not deterministic"
        assert is_legal(s, found.action)
        assert found.depth == config.max_depth and not found.stopped
        assert found.generated < config.budget  # the safety cap is never what stops it


def test_level_one_is_the_evaluations_best_move() -> None:
    s = new_game("medina-v2", 3, 4)
    mover = s.to_move
    best = max(
        legal_moves(s).actions(),
        key=lambda a: relative(
            champion_values(apply_action(s, a)), mover, DEFAULT_WEIGHTS.best_opponent
        ),
    )
    assert search_strategy(1)(s, random.Random(0)) == best


def test_the_levels_grow_in_depth_or_width() -> None:
    configs = [LEVELS[k] for k in sorted(LEVELS)]
    assert sorted(LEVELS) == list(range(1, len(LEVELS) + 1))
    for low, high in itertools.pairwise(configs):
        assert high.max_depth > low.max_depth


def test_in_process_search_policies_name_every_level() -> None:
    assert {"search", *(f"search-{k}" for k in LEVELS)} <= set(POLICIES)
    assert sorted(BOTS) == ["champion", "greedy", "random", "search"]


CHOICES = ", ".join(map(str, LEVELS))


@pytest.mark.parametrize("level", [0, max(LEVELS) + 1, -1, True, "3"])
def test_bad_levels_are_refused_by_name(level: object) -> None:
    with pytest.raises(SearchLevelError, match=f"search level must be one of {CHOICES}, got"):
        level_config(level)  # type: ignore[arg-type]
    with pytest.raises(SearchLevelError, match="search level"):
        SearchBot(0, level=level)  # type: ignore[arg-type]


def test_bad_budgets_are_refused_by_name() -> None:
    with pytest.raises(SearchLevelError, match="search budget must be at least 1 ms, got 0"):
        SearchBot(0, budget_ms=0)
    with pytest.raises(SearchLevelError, match="search budget must be at least 1 ms, got -5"):
        SearchBot(0, budget_ms=-5)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--bot", "search", "--level", "9"], f"search level must be one of {CHOICES}, got 9"),
        (["--bot", "search", "--budget-ms", "0"], "search budget must be at least 1 ms, got 0"),
        (["--bot", "greedy", "--level", "2"], "--level only apply to --bot search"),
        (["--bot", "random", "--verbose"], "--verbose only apply to --bot search"),
        (["--bot", "search", "--level", "x"], "argument --level: invalid int value: 'x'"),
    ],
)
def test_the_cli_refuses_bad_search_options(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--server", "127.0.0.1:1", "--token", "T", *argv])
    assert exit_info.value.code == 2
    assert fragment in capsys.readouterr().err


def test_verbose_logs_each_decisions_move_depth_and_time(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    s = new_game("medina-v2", 2, 1)

    async def one_decision(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, 0))
        stream.send(request(s, 1))
        await stream.reply()
        stream.send(ended(2))

    async def go() -> int:
        async with fake_server([one_decision]) as (_, address):
            argv = ["--server", address, "--token", "T", "--bot", "search", "--level", "1"]
            return await asyncio.to_thread(main, [*argv, "--verbose", "--seed", "2"])

    caplog.set_level(logging.INFO, logger="medina_client.search")
    assert run_bounded(go()) == 0
    lines = [r.getMessage() for r in caplog.records if r.name == "medina_client.search"]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("decision 0: ")
    assert ", depth 1, 1 nodes, " in line and line.endswith("(level 1)"), line
    assert capsys.readouterr().out.startswith("match over: ")


def test_search_keeps_to_its_budget_in_a_real_match(tmp_path: Path) -> None:
    """A tight clock (600 ms a decision, no bank, no grace) and a budget of 20 ms: the top
    level's searches are cut short, and no decision times out."""
    clock = TimeControl(decision_ms=600, bank_ms=0, increment_ms=0, grace_ms=0)
    bot = SearchBot(3, level=max(LEVELS), budget_ms=20)

    async def go() -> None:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, 8, time=clock))
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

    run_bounded(go(), timeout=120)
    assert bot.searches > 10
    assert bot.cut_short > 0  # the budget, not the level's depth, ended searches
