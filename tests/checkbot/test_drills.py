"""The kit's drills: one refusal of a legal reply, one dropped stream, nothing for other
signals; they sit on the bot seat's way to the referee."""

from __future__ import annotations

import asyncio

from medina.checkbot.drills import DRILL_PREFIX, Drills, drill_message
from medina.engine import Action, ActionKind
from medina.referee.seat import ConnectionSignal, ReplySignal, Signal

WALL = Action(ActionKind.WALL, 1)


def reply(rid: int) -> ReplySignal:
    return ReplySignal(1, rid, WALL, 0.0)


def test_the_drill_turns_the_nth_reply_into_a_refusal_once() -> None:
    passed: list[Signal] = []
    drills = Drills(bot=1, drill_at=2, drop_after=0, submit=passed.append, drop=lambda: None)
    drills(reply(4))  # first request
    drills(ConnectionSignal(1, True, 0.0))  # anything but a reply passes untouched
    drills(reply(6))
    drills(reply(6))  # the retry is passed on
    drills(reply(9))
    assert passed[0] == reply(4) and isinstance(passed[1], ConnectionSignal)
    refused = passed[2]
    assert isinstance(refused, ReplySignal) and refused.action is None
    assert refused.request_id == 6 and refused.error == drill_message(6)
    assert refused.error.startswith(DRILL_PREFIX) and "answer request 6 again" in refused.error
    assert passed[3:] == [reply(6), reply(9)]
    assert drills.drilled == 6 and drills.requests == [4, 6, 9]


def test_the_drop_comes_once_after_the_nth_answered_request() -> None:
    async def main() -> list[str]:
        calls: list[str] = []
        passed: list[Signal] = []
        drills = Drills(
            bot=0, drill_at=0, drop_after=2, submit=passed.append, drop=lambda: calls.append("drop")
        )
        for rid in (1, 3, 5, 7):
            before = list(calls)
            drills(reply(rid))
            assert calls == before  # never before the reply is in the referee's inbox
            await asyncio.sleep(0)  # let the event loop run a scheduled drop
            assert calls == ([] if rid == 1 else ["drop"])
        assert drills.dropped_after == 3 and drills.drilled == 0
        assert [p.request_id for p in passed if isinstance(p, ReplySignal)] == [1, 3, 5, 7]
        return calls

    assert asyncio.run(main()) == ["drop"]
