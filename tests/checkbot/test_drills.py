"""The kit's judge: one drill rejection, one dropped stream, nothing for other seats."""

from __future__ import annotations

import asyncio

from medina.checkbot.drills import DRILL_RULE, Drills, drill_message
from medina.engine import Action, ActionKind
from medina.referee.record import ErrorCode

WALL = Action(ActionKind.WALL, 1)


def test_the_drill_refuses_the_nth_request_once_with_a_labelled_rejection() -> None:
    drills = Drills(bot=1, drill_at=2, drop_after=0, drop=lambda: None)
    assert drills(1, 4, WALL) is None  # first request
    assert drills(0, 5, WALL) is None  # another seat: never judged by the kit
    refused = drills(1, 6, WALL)
    assert refused is not None
    assert (refused.code, refused.rule, refused.action) == (
        ErrorCode.ILLEGAL_ACTION,
        DRILL_RULE,
        WALL,
    )
    assert refused.message == drill_message(6)
    assert "drill" in refused.message and "answer request 6 again" in refused.message
    assert drills(1, 6, WALL) is None  # the retry is accepted
    assert drills(1, 9, WALL) is None
    assert drills.drilled == 6 and drills.requests == [4, 6, 9]


def test_the_drop_comes_once_after_the_nth_answered_request() -> None:
    async def main() -> list[str]:
        calls: list[str] = []
        drills = Drills(bot=0, drill_at=0, drop_after=2, drop=lambda: calls.append("drop"))
        for rid in (1, 3, 5, 7):
            before = list(calls)
            assert drills(0, rid, WALL) is None
            assert calls == before  # never from inside the judging itself
            await asyncio.sleep(0)  # let the event loop run a scheduled drop
            assert calls == ([] if rid == 1 else ["drop"])
        assert drills.dropped_after == 3 and drills.drilled == 0
        return calls

    assert asyncio.run(main()) == ["drop"]
