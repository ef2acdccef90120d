"""A policy over the encoding in the arena: ``play_policy``, ``PolicyBot``, ``load_policy``
and ``python -m medina_client --policy``, against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import bounded
import numpy as np
import pytest
from medina.engine import legal_moves, new_game, observe
from medina.records.reader import read_record
from medina.records.replay import replay
from medina.referee.config import MatchSettings, Policies
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import arena_pb2, match_pb2
from medina.wire.convert import legal_to_proto, observation_to_proto
from medina_client import PolicyBot, PolicyError, Turn, play, play_policy
from medina_client.__main__ import main
from medina_client.bots import RandomBot
from medina_client.encoding import PolicyInput
from medina_client.policy import load_policy
from medina_envs import IllegalIndexError, aec_env
from medina_envs.examples import linear_policy
from medina_envs.examples.linear_policy import PolicyWeightsError
from medina_envs.observer import encode_state

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 90) -> T:
    return bounded.run(coro, timeout)


async def server(tmp: Path) -> RunningServer:
    return await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp))


def last_legal(obs: PolicyInput) -> int:
    """The highest index the mask allows (a numpy integer: allowed)."""
    return np.flatnonzero(obs["action_mask"])[-1]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 3), ("medina-v1-2p", 2)])
def test_a_policy_plays_a_whole_match(tmp_path: Path, ruleset: str, players: int) -> None:
    async def main_() -> list[match_pb2.MatchResult]:
        running = await server(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings(ruleset, players, 4))
            tokens = hosted.tokens
            games = [play_policy(last_legal, running.address, tokens[0], name="last")]
            games += [play(RandomBot(k), running.address, tokens[k]) for k in range(1, players)]
            return list(await asyncio.gather(*games))
        finally:
            await running.stop(1)

    results = run(main_())
    assert all(r.ending == match_pb2.MATCH_ENDING_COMPLETE for r in results)
    assert results[0].seats[0].name == "last"
    assert {s.termination for s in results[0].seats} == {match_pb2.TERMINATION_NORMAL}


def test_an_index_outside_the_mask_is_a_policy_error(tmp_path: Path) -> None:
    def illegal(obs: PolicyInput) -> int:
        return int(np.flatnonzero(obs["action_mask"] == 0)[0])

    async def main_() -> match_pb2.MatchResult:
        running = await server(tmp_path)
        try:
            policies = Policies(reconnect_grace_ms=100)
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 1, policies=policies))
            other = asyncio.ensure_future(play(RandomBot(1), running.address, hosted.tokens[1]))
            with pytest.raises(PolicyError, match="which its mask does not allow"):
                await play_policy(illegal, running.address, hosted.tokens[0])
            return await other
        finally:
            await running.stop(1)

    # The SDK half-closes on the error, so the seat is disconnected, never crashed (which a
    # cancelled stream reads as, or not, as the server's timing falls).
    seat = run(main_()).seats[0]
    assert seat.termination == match_pb2.TERMINATION_DISCONNECTED
    assert seat.detail == "did not reconnect in time"


def test_a_policy_returning_a_0d_array_plays_as_in_the_environments(tmp_path: Path) -> None:
    """``np.asarray`` of an index is an index in the environments' ``step``, and so in the
    arena (one check, ``encoding.checked_index``)."""

    def as_array(obs: PolicyInput) -> Any:
        return np.asarray(last_legal(obs))

    async def main_() -> match_pb2.MatchResult:
        running = await server(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 5))
            result, _ = await asyncio.gather(
                play_policy(as_array, running.address, hosted.tokens[0]),
                play(RandomBot(1), running.address, hosted.tokens[1]),
            )
            return result
        finally:
            await running.stop(1)

    result = run(main_())
    assert result.ending == match_pb2.MATCH_ENDING_COMPLETE
    assert {s.termination for s in result.seats} == {match_pb2.TERMINATION_NORMAL}


@pytest.mark.parametrize(
    ("chosen", "message"),
    [
        (True, "True is not an action index"),
        (19.0, "19.0 is not an action index"),
        (np.array([19]), r"array\(\[19\]\) is not an action index"),
        ("19", "'19' is not an action index"),
        (None, "None is not an action index"),
        (2575, "action index 2575 is outside 0..2574"),
    ],
)
def test_what_is_not_an_index_is_a_policy_error_as_in_the_environments(
    chosen: object, message: str
) -> None:
    s = new_game("medina-v2", 2, 5)
    turn = Turn(
        arena_pb2.DecisionRequest(
            request_id=7,
            observation=observation_to_proto(observe(s, s.to_move)),
            legal=legal_to_proto(legal_moves(s)),
        ),
        s.to_move,
        lambda: s,
    )
    with pytest.raises(PolicyError, match=f"request 7: {message}"):
        PolicyBot(lambda obs: chosen).choose(turn)
    env = aec_env("medina-v2", 2)
    env.reset(seed=5)
    with pytest.raises(IllegalIndexError, match=f"seat_0 is to move: {message}"):
        env.step(chosen)  # type: ignore[arg-type]


def test_a_match_record_gives_back_what_the_policy_saw(tmp_path: Path) -> None:
    """docs/envs.md: no environment starts from an arena match, but its record replayed
    through the engine (``medina.records.replay``) and ``observer.encode_state`` gives the
    policy's input at each of its seat's decisions, as play_policy built it."""
    seen: list[PolicyInput] = []

    def remembering(obs: PolicyInput) -> int:
        seen.append(obs)
        return last_legal(obs)

    async def main_() -> Path:
        running = await server(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 12))
            await asyncio.gather(
                play_policy(remembering, running.address, hosted.tokens[0]),
                play(RandomBot(1), running.address, hosted.tokens[1]),
            )
            assert hosted.task is not None
            await hosted.task
            return hosted.record_path
        finally:
            await running.stop(1)

    steps = [step for step in replay(read_record(run(main_()))) if step.seat == 0]
    assert len(steps) == len(seen) > 10
    for step, obs in zip(steps, seen, strict=True):
        again = encode_state(step.before, 0).policy_input()
        for part in ("planes", "vector"):
            np.testing.assert_array_equal(again["observation"][part], obs["observation"][part])
        np.testing.assert_array_equal(again["action_mask"], obs["action_mask"])


def test_play_policy_needs_the_legal_actions() -> None:
    with pytest.raises(PolicyError, match="omit_legal_actions must be False"):
        run(play_policy(last_legal, "127.0.0.1:1", "T", omit_legal_actions=True))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("medina_envs", "named module:function"),
        ("no_such_module_here:f", "cannot import the policy's module"),
        ("medina_envs.examples.linear_policy:nothing", "has no 'nothing'"),
        ("medina_envs.examples.linear_policy:FEATURES", "is not callable"),
    ],
)
def test_load_policy_names_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        load_policy(spec)


@pytest.mark.parametrize("bad", ["missing.npz", "not-weights.npz"])
def test_wrong_policy_weights_are_named_before_the_match(
    bad: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The example policy reads $MEDINA_POLICY_WEIGHTS as --policy loads it, not at its
    first decision: nothing listens on 127.0.0.1:1, so a refusal here came first."""
    path = tmp_path / bad
    if bad == "not-weights.npz":
        np.savez(path, something=np.zeros(3))
    monkeypatch.setenv("MEDINA_POLICY_WEIGHTS", str(path))
    monkeypatch.delitem(vars(linear_policy), "policy", raising=False)  # not read yet
    spec = "medina_envs.examples.linear_policy:policy"
    with pytest.raises(SystemExit) as info:
        main(["--server", "127.0.0.1:1", "--token", "T", "--policy", spec])
    err = capsys.readouterr().err.splitlines()[-1]
    assert info.value.code == 2 and f"MEDINA_POLICY_WEIGHTS={path}: " in err
    assert ("no such file" if bad == "missing.npz" else "not weights") in err
    with pytest.raises(PolicyWeightsError, match=f"MEDINA_POLICY_WEIGHTS={path}: "):
        linear_policy.policy  # noqa: B018  # looked up: read, and refused


def test_the_command_line_plays_a_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def main_() -> tuple[int, Any]:
        running = await server(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 8))
            argv = ["--server", running.address, "--token", hosted.tokens[0]]
            argv += ["--policy", "medina_envs.examples.linear_policy:policy"]
            code, result = await asyncio.gather(
                asyncio.to_thread(main, argv),
                play(RandomBot(2), running.address, hosted.tokens[1]),
            )
            return code, result
        finally:
            await running.stop(1)

    code, result = run(main_())
    assert code == 0 and result.ending == match_pb2.MATCH_ENDING_COMPLETE
    assert capsys.readouterr().out.startswith("match over: seat 0 policy: ")


def test_bot_and_policy_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--server", "x:1", "--token", "T", "--bot", "greedy", "--policy", "m:f"])
    assert info.value.code == 2
    assert "--bot and --policy exclude each other" in capsys.readouterr().err
