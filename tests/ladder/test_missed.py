"""The match ends a ladder keeps for a bot whose lobby stream was down: only ends, the
newest few, for a bounded time."""

from __future__ import annotations

from medina.ladder.missed import MissedEnds
from medina.v1 import ladder_pb2


def ended(match_id: str) -> ladder_pb2.LobbyResponse:
    return ladder_pb2.LobbyResponse(ended=ladder_pb2.LadderMatchEnded(match_id=match_id))


def ids(messages: list[ladder_pb2.LobbyResponse]) -> list[str]:
    return [m.ended.match_id for m in messages]


def test_only_match_ends_are_kept_and_taken_once_oldest_first() -> None:
    missed = MissedEnds()
    beat = ladder_pb2.LobbyResponse(heartbeat=ladder_pb2.Heartbeat(sequence=3))
    missed.keep(1, [ended("m1"), beat], now=0.0)
    missed.keep(1, [ended("m2")], now=1.0)
    missed.keep(2, [ended("m3")], now=1.0)
    assert ids(missed.take(1, now=2.0)) == ["m1", "m2"]
    assert missed.take(1, now=2.0) == []
    assert ids(missed.take(2, now=2.0)) == ["m3"]


def test_the_newest_per_bot_are_kept_for_the_keeping_time() -> None:
    missed = MissedEnds(keep_s=10.0, per_bot=2)
    missed.keep(1, [ended("old"), ended("m1"), ended("m2")], now=0.0)
    missed.keep(2, [ended("gone")], now=0.0)
    missed.keep(1, [ended("m3")], now=5.0)
    assert len(missed) == 3  # bot 1 keeps its newest two
    assert ids(missed.take(1, now=12.0)) == ["m3"]  # m2 kept at 0 s, past 10 s
    assert len(missed) == 0  # bot 2's expired too
