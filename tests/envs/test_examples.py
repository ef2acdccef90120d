"""The examples: the trained linear policy (its pieces, and the shipped weights beating
random over gRPC with a 95 % interval)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import numpy as np
import pytest
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina_client.bots import RandomBot
from medina_envs.examples.linear_policy import WEIGHTS, LinearPolicy
from medina_envs.examples.train_policy import collect, evaluate, main, train, wilson


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
    low, _ = wilson(sum(scores) / len(scores), len(scores))
    assert low > 0.5, f"mean score {sum(scores) / len(scores):.2f}, 95 % interval from {low:.2f}"


def test_wilson_intervals() -> None:
    low, high = wilson(0.5, 100)
    assert low == pytest.approx(0.404, abs=1e-3) and high == pytest.approx(0.596, abs=1e-3)
    assert wilson(1.0, 10)[1] == pytest.approx(1.0)


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
