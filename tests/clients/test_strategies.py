"""The reference strategies: greedy beats random, search is seeded and deterministic for an
iteration budget, keeps to its time budget in a real match, explains itself with --verbose,
and refuses bad levels and budgets by name."""

from __future__ import annotations

import asyncio
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
from medina.strategies.search import (
    LEVELS,
    SearchConfig,
    SearchLevelError,
    level_config,
    search,
)
from medina_client import play
from medina_client.__main__ import main
from medina_client.bots import BOTS, RandomBot, SearchBot
from medina_client.bots.search import default_budget_ms

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
def test_search_is_deterministic_for_a_seed_and_an_iteration_budget(
    ruleset: str, players: int
) -> None:
    s = new_game(ruleset, players, 21)
    rng = random.Random(21)
    for _ in range(40):
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    config = SearchConfig(iterations=12, candidates=4, width=3, own_width=4)
    first = search(s, random.Random(5), config)
    again = search(s, random.Random(5), config)
    assert first == again
    assert first.iterations == 12 and not first.stopped_early
    assert sum(c.visits for c in first.candidates) == 12
    assert is_legal(s, first.action)
    assert first.action == first.candidates[0].action
    assert [c.value for c in first.candidates] == sorted(
        (c.value for c in first.candidates), reverse=True
    )


def test_a_deadline_already_passed_falls_back_to_the_static_order() -> None:
    s = new_game("medina-v2", 3, 4)
    found = search(s, random.Random(1), level_config(5), deadline=0.0, clock=lambda: 1.0)
    assert found.iterations == 0 and found.stopped_early
    assert [c.value for c in found.candidates] == [c.prior for c in found.candidates]


def test_in_process_search_policies_name_every_level() -> None:
    assert {"search", *(f"search-{k}" for k in LEVELS)} <= set(POLICIES)
    assert sorted(BOTS) == ["champion", "greedy", "random", "search"]


@pytest.mark.parametrize("level", [0, 6, -1, True, "3"])
def test_bad_levels_are_refused_by_name(level: object) -> None:
    with pytest.raises(SearchLevelError, match=r"search level must be one of 1, 2, 3, 4, 5, got"):
        level_config(level)  # type: ignore[arg-type]
    with pytest.raises(SearchLevelError, match="search level"):
        SearchBot(0, level=level)  # type: ignore[arg-type]


def test_bad_budgets_and_configs_are_refused_by_name() -> None:
    with pytest.raises(SearchLevelError, match="search budget must be at least 1 ms, got 0"):
        SearchBot(0, budget_ms=0)
    with pytest.raises(SearchLevelError, match="search iterations must be a positive integer"):
        SearchConfig(iterations=0)
    with pytest.raises(SearchLevelError, match=r"search epsilon must be 0\.\.1"):
        SearchConfig(epsilon=1.5)


def test_the_default_budget_is_a_capped_share_of_the_decision_time() -> None:
    assert default_budget_ms(400) == 100
    assert default_budget_ms(65_000) == 1_000
    assert default_budget_ms(0) == 0


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--bot", "search", "--level", "9"], "search level must be one of 1, 2, 3, 4, 5, got 9"),
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


def test_verbose_logs_the_top_candidates_with_their_values(
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
    assert "iterations in" in line and "(level 1" in line and "; top: " in line
    top = line.split("; top: ", 1)[1].split("; ")
    assert 1 < len(top) <= 4  # level 1 keeps 4 candidates
    assert all(" rollouts, static " in c and " = " in c for c in top)
    assert capsys.readouterr().out.startswith("match over: ")


def test_search_keeps_to_its_budget_in_a_real_match(tmp_path: Path) -> None:
    """A tight clock (600 ms a decision, no bank, no grace): level 5 would need seconds, the
    default budget (a quarter of the decision time) cuts it short, and no decision times out."""
    clock = TimeControl(decision_ms=600, bank_ms=0, increment_ms=0, grace_ms=0)
    bot = SearchBot(3, level=5)

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
    assert bot.cut_short > 0  # the budget, not the iteration cap, ended searches
