"""A seat played over a gRPC stream times every request it writes (``GrpcSeat.written``):
the referee starts a request's clock, and admission measures the server's turnaround, from
the moment gRPC reports the request written."""

from __future__ import annotations

import asyncio

from medina.engine import get_ruleset, legal_moves, new_game, observe
from medina.referee.seat import ClockView, DecisionRequest, RequestWrittenSignal, Signal
from medina.rpc.common.admission import Turnaround
from medina.rpc.single.grpc_seat import GrpcSeat


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _request(request_id: int) -> DecisionRequest:
    state = new_game("medina-v2", 2, seed=1)
    return DecisionRequest(
        request_id, 0, observe(state, 0), legal_moves(state), ClockView(1000, 0, None, 0)
    )


def test_a_seat_asked_again_before_its_last_write_is_reported_times_both_requests() -> None:
    # gRPC reports a write once it is done, which can come after the bot's answer to it was
    # read and the seat asked again (a seat with two decisions in a row). The second request
    # took the first one's place: the first was never reported written, and every later
    # turnaround was measured from one reply too early (p50 2.7 ms for 0.65 ms, one match).
    async def main() -> None:
        signals: list[Signal] = []
        clock = FakeClock()
        meter = Turnaround(min_samples=1, clock=clock)
        timing = meter.match()
        geometry = get_ruleset("medina-v2", 2).geometry
        seat = GrpcSeat(0, geometry, signals.append, timing)
        conn = seat.attach(omit_legal=False)
        assert seat.request(_request(1))
        first = conn.queue.get_nowait()
        timing.replied(2.0)  # the bot answered request 1 before its write was reported
        assert seat.request(_request(2))
        second = conn.queue.get_nowait()
        assert isinstance(first, bytes) and isinstance(second, bytes)
        seat.written(conn, first)
        seat.written(conn, second)
        written = [s for s in signals if isinstance(s, RequestWrittenSignal)]
        assert [s.request_id for s in written] == [1, 2]
        assert timing.started is not None
        # Request 1 started the match; request 2 followed the reply: one turnaround.
        assert len(meter._seconds) == 1

    asyncio.run(main())


def test_a_message_that_is_no_request_starts_no_clock() -> None:
    async def main() -> None:
        signals: list[Signal] = []
        seat = GrpcSeat(0, get_ruleset("medina-v2", 2).geometry, signals.append)
        conn = seat.attach(omit_legal=False)
        assert seat.request(_request(1))
        request = conn.queue.get_nowait()
        assert isinstance(request, bytes)
        seat.written(conn, b"an update")  # written before the request: not it
        assert not signals
        seat.written(conn, request)
        seat.written(conn, request)  # reported once only
        assert [s.request_id for s in signals if isinstance(s, RequestWrittenSignal)] == [1]

    asyncio.run(main())
