"""The examples: the trained linear policy (its pieces, and the shipped weights beating
random over gRPC with a 95 % interval)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from medina.engine.stats import wilson
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina_client.bots import RandomBot
from medina_envs.examples import spiel_mcts
from medina_envs.examples.linear_policy import WEIGHTS, LinearPolicy
from medina_envs.examples.train_policy import collect, evaluate, main, report, train


def scores_against_random(tmp: Path, policy: LinearPolicy, games: int) -> list[float]:
    async def main() -> list[float]:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp))
        try:
            return await evaluate(running.address, policy, RandomBot, games, 10_000)
        finally:
            await running.stop(1)

    return asyncio.run(asyncio.wait_for(main(), timeout=280))


def test_training_learns_from_the_teacher_and_saves(tmp_path: Path) -> None:
    samples = collect(2, seed=3)
    assert len(samples) > 40 and all(s.mask[s.action] == 1 for s in samples)
    policy = train(samples, epochs=1, seed=3)
    assert np.abs(policy.weights).sum() > 0
    policy.save(tmp_path / "w.npz")
    loaded = LinearPolicy.load(tmp_path / "w.npz")
    np.testing.assert_array_equal(loaded.weights, policy.weights)
    assert len(scores_against_random(tmp_path, loaded, 2)) == 2


@pytest.mark.timeout(300)
def test_the_shipped_policy_beats_random_over_grpc(tmp_path: Path) -> None:
    scores = scores_against_random(tmp_path, LinearPolicy.load(WEIGHTS), 40)
    low, _ = wilson(sum(scores), len(scores))
    assert low > 0.5, f"mean score {sum(scores) / len(scores):.2f}, 95 % interval from {low:.2f}"


def test_wilson_intervals() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.404, abs=1e-3) and high == pytest.approx(0.596, abs=1e-3)
    assert wilson(10, 10)[1] == 1.0 and wilson(0, 0) == (0.0, 1.0)


def test_an_interval_at_a_share_of_0_or_1_stays_within_0_and_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Rounding put the bound a hair below 0: the report read "-0.00..0.43"."""
    for n in range(1, 60):
        low, high = wilson(0, n)
        assert low == 0.0 and 0 < high < 1
        low, high = wilson(n, n)
        assert 0 < low < 1 and high == 1.0
    report("greedy", [0.0] * 5)
    assert "(95 % interval 0.00..0.43); loses to it" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("run", "argv", "problem"),
    [
        (main, ["--games", "0"], "--games must be at least 1, got 0"),
        (main, ["--epochs", "-1"], "--epochs must be at least 0, got -1"),
        (main, ["--eval-games", "-1"], "--eval-games must be at least 0, got -1"),
        (main, ["--seed", "-1"], "--seed must be in 0..2147483647, got -1"),
        (spiel_mcts.main, ["--games", "0"], "--games must be at least 1, got 0"),
        (spiel_mcts.main, ["--simulations", "0"], "--simulations must be at least 1, got 0"),
        (spiel_mcts.main, ["--seed", "-1"], "--seed must be in 0..2147483647, got -1"),
        (
            spiel_mcts.main,
            ["--ruleset", "medina-v1", "--players", "2"],
            "ruleset 'medina-v1' does not support 2 players",
        ),
        (
            spiel_mcts.main,
            ["--players", "2", "--opponents", "random,greedy,random"],
            "--opponents names 3 strategies for the 1 other seat(s) of 2 players",
        ),
        (
            spiel_mcts.main,
            ["--players", "4", "--opponents", "random,greedy"],
            "--opponents names 2 strategies for the 3 other seat(s) of 4 players",
        ),
    ],
)
def test_the_examples_refuse_a_bad_option_in_one_line(
    run: Callable[[list[str]], int],
    argv: list[str],
    problem: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        run(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith("usage: ")
    assert [line for line in err.splitlines() if "error" in line] == [err.splitlines()[-1]]
    assert problem in err.splitlines()[-1]  # one line naming the problem, after the usage
    assert not list(tmp_path.iterdir())  # nothing written


def test_training_writes_its_weights_here_not_over_the_shipped_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = WEIGHTS.read_bytes()
    monkeypatch.chdir(tmp_path)
    assert main(["--games", "1", "--epochs", "1", "--eval-games", "0"]) == 0
    assert WEIGHTS.read_bytes() == shipped
    LinearPolicy.load(tmp_path / "linear_policy.npz")  # what MEDINA_POLICY_WEIGHTS may name


def test_training_refuses_what_it_would_fail_on_after_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--out", str(tmp_path / "missing" / "w.npz")])
    assert stopped.value.code == 2 and "no directory" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "medina.cli", None)  # as with medina-client alone
    with pytest.raises(SystemExit) as stopped:
        main(["--out", str(tmp_path / "w.npz")])
    assert stopped.value.code == 2 and "medina-arena is not installed" in capsys.readouterr().err
    assert not (tmp_path / "w.npz").exists()
