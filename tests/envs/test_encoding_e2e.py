"""Through a real server on 127.0.0.1: the tensors a bot builds from each DecisionRequest
are the ones the environments build in process for the same position."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import numpy as np
import pytest
from medina.engine import Action, apply_action, new_game
from medina.referee.config import MatchSettings
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina_client import Bot, Turn, play
from medina_client.encoding import Encoded, action_of_index, encode
from medina_envs.observer import encode_state


class Recorder(Bot):
    """Plays a uniformly random index of the mask it built, and keeps every encoding."""

    def __init__(self, seed: int, log: list[tuple[int, int, Encoded, Action]]) -> None:
        self.rng = random.Random(seed)
        self.log = log

    def choose(self, turn: Turn) -> Action:
        enc = encode(turn.observation, turn.request.legal, turn.excluded)
        index = int(self.rng.choice(np.flatnonzero(enc.mask)))
        board = turn.board
        action = action_of_index(index, board.cols, board.rows)
        self.log.append((turn.request_id, turn.seat, enc, action))
        return action


@pytest.mark.parametrize(
    ("ruleset", "players"), [("medina-v2", 2), ("medina-v2", 4), ("medina-v1-2p", 2)]
)
def test_wire_encodings_equal_the_in_process_ones(
    tmp_path: Path, ruleset: str, players: int
) -> None:
    log: list[tuple[int, int, Encoded, Action]] = []

    async def main() -> None:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            hosted = running.arena.create(MatchSettings(ruleset, players, 21))
            bots = [Recorder(seat, log) for seat in range(players)]
            await asyncio.gather(
                *(play(b, running.address, t) for b, t in zip(bots, hosted.tokens, strict=True))
            )
        finally:
            await running.stop(1)

    asyncio.run(asyncio.wait_for(main(), timeout=90))
    s = new_game(ruleset, players, 21)
    for request_id, seat, wire, action in sorted(log, key=lambda entry: entry[0]):
        assert s.to_move == seat, f"request {request_id}"
        fast = encode_state(s, seat)
        np.testing.assert_array_equal(fast.planes, wire.planes)
        np.testing.assert_array_equal(fast.vector, wire.vector)
        np.testing.assert_array_equal(fast.mask, wire.mask)
        s = apply_action(s, action)
    assert s.over and len(log) > 30
