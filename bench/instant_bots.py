"""Bots for the workers benchmark: every seat of many 4-player matches in one asyncio process,
each answering with the first legal action the moment a request arrives, or after a think
time drawn from LO-HI ms (``--think LO-HI``).

Run as ``python -m bench.instant_bots ADDRESS MATCHES SECONDS [--via-front] [--think LO-HI]
[--warmup S] [--hello sdk|updates|1.0]`` with the organiser token in
``MEDINA_ORGANISER_TOKEN``. ``MATCHES`` lanes each create a match at ADDRESS, play it to
the end (at the endpoint the answer names, or at ADDRESS with ``--via-front`` or when there
is none; a redirect is followed, as the SDK does) and start the next, for S + SECONDS;
matches under way then play to their end. Instant bots play on a 10 s clock (the rate is
measured, not the clock); thinking bots on 100 ms per decision and no bank, and every
match's strikes and forfeits are counted (GetMatch). The measured window is the SECONDS
after the warm-up: ``{"window": "start"}`` and ``{"window": "end"}`` are printed as it opens
and closes (a parent samples the server's CPU then), and at the end one JSON line: decisions
answered in the window, its length, matches finished, the CPU time this process used in the
window, strikes, forfeits, seats whose stream failed, matches whose result could not be
read, CreateMatch calls refused, the bot-seen latency p50/p99 in ms (a seat's reply sent ->
the match's next request received, think time excluded) and this process's own loop lag.
Uses only the generated stubs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import grpc
from medina.rpc.organiser import refusal_of
from medina.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    arena_pb2,
    arena_pb2_grpc,
    common_pb2,
    game_pb2,
    match_pb2,
)

from bench.pauses import hold, release

#: How long a refused or unavailable CreateMatch waits without a retry hint.
RETRY_S = 1.0


def retry_wait(exc: grpc.aio.AioRpcError) -> float:
    """Seconds before asking again after a failed CreateMatch: a full server's retry hint
    (RESOURCE_EXHAUSTED), as the SDK's organiser calls follow it, else ``RETRY_S``."""
    hint_ms = refusal_of(exc)[1] if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED else 0
    return hint_ms / 1000 if hint_ms else RETRY_S


#: What a seat's stream raises when it fails under the seat.
STREAM_FAILED = (grpc.aio.AioRpcError, asyncio.InvalidStateError)
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # a connection per lane


#: How long a bot that read MatchEnded waits for the server to end the stream.
END_WAIT_S = 5.0


async def leave(call: grpc.aio.StreamStreamCall[Any, Any]) -> None:
    """Leave after MatchEnded as the SDK does: half-close, and wait for the server to end the
    stream (it does at once) before closing; a stream cancelled before its status is sent
    costs the server memory inside gRPC (docs/operations.md, "Memory and clocks"). A server
    that has not ended it by then is left to the caller's cancel."""
    await call.done_writing()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(END_WAIT_S):
            await call.code()


def _action(request: arena_pb2.DecisionRequest) -> game_pb2.Action:
    legal = request.legal
    if not legal.placements:
        return game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)
    first = legal.placements[0]
    return game_pb2.Action(kind=first.kind, square=first.squares[0], colour=first.colour)


def strikes_and_forfeits(result: match_pb2.MatchResult) -> tuple[int, int]:
    """A finished match's timeout strikes, and its seats that did not end normally."""
    strikes = sum(s.strikes for s in result.seats)
    forfeits = sum(
        s.termination not in (match_pb2.TERMINATION_NORMAL, match_pb2.TERMINATION_UNSPECIFIED)
        for s in result.seats
    )
    return strikes, forfeits


class Lanes:
    """The lanes' shared tally."""

    def __init__(
        self,
        address: str,
        start: float,
        deadline: float,
        via_front: bool,
        think: tuple[float, float] | None = None,
        hello_kind: str = "sdk",
    ) -> None:
        self.address = address
        self.hello_kind = hello_kind
        #: Streams a server redirected to the worker holding their match.
        self.redirects = 0
        #: The measured window: decisions and latencies count from ``start`` to ``deadline``.
        self.start = start
        self.deadline = deadline
        self.via_front = via_front
        self.think = think
        self.decisions = 0
        self.matches = 0
        self.strikes = 0
        self.forfeits = 0
        #: Seats whose stream failed (a gRPC error) instead of playing to the end.
        self.errors = 0
        #: Matches whose result could not be read (lost with a worker that died).
        self.lost = 0
        #: CreateMatch calls refused, by status code.
        self.refusals: dict[str, int] = {}
        self.latencies: list[float] = []
        token = os.environ.get("MEDINA_ORGANISER_TOKEN", "")
        self.auth = (("authorization", f"Bearer {token}"),) if token else ()

    def hello(self, token: str) -> arena_pb2.Hello:
        """The Hello of ``self.hello_kind``: ``sdk`` is what the Python SDK sends by default
        for a bot that does not use updates (1.1, forfeit notices, redirects, no updates);
        ``updates`` the same asking for updates; ``1.0`` a protocol 1.0 bot's (updates, no
        feature: a multi-worker server forwards it)."""
        if self.hello_kind == "1.0":
            return arena_pb2.Hello(protocol_version=1, bot_name="instant", token=token)
        return arena_pb2.Hello(
            protocol_version=1,
            protocol_minor=1,
            bot_name="instant",
            token=token,
            omit_updates=self.hello_kind == "sdk",
            features=["forfeit-notices", "redirect"],
        )

    async def seat(
        self,
        channel: Callable[[str], grpc.aio.Channel],
        address: str,
        token: str,
        last_reply: list[float],
        rng: random.Random,
    ) -> None:
        """Play one seat to its end (``last_reply``: when the match's last reply left),
        following a redirect as the SDK does."""
        hello = arena_pb2.PlayRequest(hello=self.hello(token))
        call = arena_pb2_grpc.ArenaServiceStub(channel(address)).Play()
        await call.write(hello)
        first = await call.read()
        if isinstance(first, arena_pb2.PlayResponse) and first.HasField("redirect"):
            self.redirects += 1
            host = first.redirect.host or address.rpartition(":")[0]
            call = arena_pb2_grpc.ArenaServiceStub(channel(f"{host}:{first.redirect.port}")).Play()
            await call.write(hello)
            first = await call.read()
        pending = [first]
        while True:
            message = pending.pop() if pending else await call.read()
            if not isinstance(message, arena_pb2.PlayResponse):
                break
            if message.HasField("ended"):
                await leave(call)
                break
            if message.HasField("request"):
                now = time.perf_counter()
                if last_reply[0] and self.start <= now < self.deadline:
                    self.latencies.append(now - last_reply[0])
                request = message.request
                if self.think is not None:
                    await asyncio.sleep(rng.uniform(*self.think))
                reply = arena_pb2.Reply(request_id=request.request_id, action=_action(request))
                last_reply[0] = time.perf_counter()
                await call.write(arena_pb2.PlayRequest(reply=reply))
                if self.start <= time.perf_counter() < self.deadline:
                    self.decisions += 1
        await call.done_writing()

    async def lane(self, seed: int) -> None:
        """Matches one after another until the deadline."""
        channels: dict[str, grpc.aio.Channel] = {}

        def channel(address: str) -> grpc.aio.Channel:
            if address not in channels:
                channels[address] = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
            return channels[address]

        stub = admin_pb2_grpc.MatchServiceStub(channel(self.address))
        if self.think is None:
            clock = match_pb2.TimeControl(decision_ms=10_000, bank_ms=60_000)
        else:
            clock = match_pb2.TimeControl(decision_ms=100, bank_ms=0, increment_ms=0)
        rng = random.Random(seed)
        try:
            while time.perf_counter() < self.deadline:
                config = match_pb2.MatchConfig(
                    ruleset=common_pb2.RULESET_MEDINA_V2, players=4, seed=seed, time_control=clock
                )
                seed += 1000
                try:
                    created = await stub.CreateMatch(
                        admin_pb2.CreateMatchRequest(config=config), metadata=self.auth
                    )
                except grpc.aio.AioRpcError as exc:
                    # Refused or unavailable (a worker being replaced): counted, tried again
                    # after the server's retry hint, as the SDK's organiser calls do (a
                    # full server asks a crowd of waiting organisers to come back later).
                    self.refusals[exc.code().name] = self.refusals.get(exc.code().name, 0) + 1
                    await asyncio.sleep(retry_wait(exc))
                    continue
                use_front = self.via_front or not created.HasField("endpoint")
                where = self.address if use_front else created.endpoint
                last_reply = [0.0]
                played = await asyncio.gather(
                    *(self.seat(channel, where, t.token, last_reply, rng) for t in created.tokens),
                    return_exceptions=True,
                )
                # A seat whose stream failed (an error status, or a write to a call that had
                # already ended) is counted, not fatal: the benchmark reports.
                self.errors += sum(isinstance(p, STREAM_FAILED) for p in played)
                for p in played:
                    if isinstance(p, BaseException) and not isinstance(p, STREAM_FAILED):
                        raise p
                try:
                    got = await stub.GetMatch(
                        admin_pb2.GetMatchRequest(match_id=created.match_id), metadata=self.auth
                    )
                except grpc.aio.AioRpcError:
                    self.lost += 1  # the server says why (a worker that died, say); go on
                    continue
                self.matches += 1
                strikes, forfeits = strikes_and_forfeits(got.match.result)
                self.strikes += strikes
                self.forfeits += forfeits
        finally:
            for c in channels.values():
                await c.close()


async def run(
    address: str,
    matches: int,
    seconds: float,
    via_front: bool,
    think: tuple[float, float] | None = None,
    warmup: float = 0.0,
    hello_kind: str = "sdk",
) -> dict[str, float]:
    """Play with ``matches`` lanes for ``warmup`` then ``seconds`` (the measured window);
    the tally. A line ``{"window": "start"}`` and one ``{"window": "end"}`` are printed
    when the window opens and closes, for a parent measuring the server over the same
    window."""
    started = time.perf_counter()
    lanes = Lanes(
        address, started + warmup, started + warmup + seconds, via_front, think, hello_kind
    )
    cpu: list[float] = []

    async def window() -> None:
        was_on = False
        for edge, at in (("start", lanes.start), ("end", lanes.deadline)):
            await asyncio.sleep(max(0.0, at - time.perf_counter()))
            if edge == "start":
                was_on = hold()  # this process's collections are not the server's delay
            else:
                release(was_on)
            cpu.append(time.process_time())
            print(json.dumps({"window": edge}), flush=True)

    lag: list[float] = []

    async def ticker() -> None:
        # This process's own event-loop lateness: a bot process that is itself overloaded
        # answers late, and that is not the server's doing.
        while time.perf_counter() < lanes.deadline:
            due = time.perf_counter() + 0.01
            await asyncio.sleep(0.01)
            if time.perf_counter() >= lanes.start:
                lag.append(time.perf_counter() - due)

    await asyncio.gather(window(), ticker(), *(lanes.lane(seed) for seed in range(1, matches + 1)))
    return {
        "decisions": lanes.decisions,
        "seconds": seconds,
        "matches": lanes.matches,
        "cpu_s": cpu[1] - cpu[0],
        "strikes": lanes.strikes,
        "forfeits": lanes.forfeits,
        "errors": lanes.errors,
        "lost": lanes.lost,
        "refused": sum(lanes.refusals.values()),
        "redirects": lanes.redirects,
        "p50_ms": _quantile_ms(lanes.latencies, 0.5),
        "p99_ms": _quantile_ms(lanes.latencies, 0.99),
        "bot_lag_p99_ms": _quantile_ms(lag, 0.99),
        "bot_lag_max_ms": _quantile_ms(lag, 1.0),
    }


def _quantile_ms(seconds: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of durations in seconds, in ms; NaN for none."""
    ordered = sorted(seconds)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main(argv: list[str]) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.instant_bots")
    parser.add_argument("address")
    parser.add_argument("matches", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--via-front", action="store_true")
    parser.add_argument("--think", metavar="LO-HI", help="think LO to HI ms per decision")
    parser.add_argument(
        "--warmup", type=float, default=0.0, metavar="S", help="play S seconds before measuring"
    )
    parser.add_argument(
        "--hello",
        choices=("sdk", "updates", "1.0"),
        default="sdk",
        help="the bots' Hello: the SDK's default (no updates), the SDK's asking for updates, "
        "or a protocol 1.0 bot's",
    )
    args = parser.parse_args(argv)
    think = None
    if args.think is not None:
        lo, hi = (float(x) / 1000 for x in args.think.split("-"))
        think = (lo, hi)
    tally = asyncio.run(
        run(
            args.address,
            args.matches,
            args.seconds,
            args.via_front,
            think,
            args.warmup,
            args.hello,
        )
    )
    print(json.dumps(tally), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
