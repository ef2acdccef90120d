"""The flood guard's verdicts on unsolicited messages (rpc/common/limits.py)."""

from __future__ import annotations

from medina.rpc.common.limits import FloodGuard, FloodVerdict, Limits


def test_verdicts_run_from_ok_through_drops_to_disconnect() -> None:
    now = [0.0]
    limits = Limits(unsolicited_burst=2, unsolicited_per_second=1.0, flood_disconnect_after=4)
    guard = FloodGuard(limits, clock=lambda: now[0])
    verdicts = [guard.admit() for _ in range(6)]
    assert verdicts == [
        FloodVerdict.OK,
        FloodVerdict.OK,
        FloodVerdict.FIRST_DROP,
        FloodVerdict.DROP,
        FloodVerdict.DROP,
        FloodVerdict.DISCONNECT,
    ]


def test_a_message_within_budget_again_restarts_the_count() -> None:
    now = [0.0]
    limits = Limits(unsolicited_burst=1, unsolicited_per_second=1.0, flood_disconnect_after=3)
    guard = FloodGuard(limits, clock=lambda: now[0])
    assert [guard.admit() for _ in range(3)] == [
        FloodVerdict.OK,
        FloodVerdict.FIRST_DROP,
        FloodVerdict.DROP,
    ]
    now[0] = 1.0  # one token back
    assert guard.admit() is FloodVerdict.OK
    assert guard.admit() is FloodVerdict.FIRST_DROP  # told once more, not cut
