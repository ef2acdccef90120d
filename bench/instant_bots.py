"""Instant bots for the workers benchmark: every seat of many 4-player matches in one asyncio
process, each answering the moment a request arrives with the first legal action.

Run as ``python -m bench.instant_bots ADDRESS MATCHES SECONDS [--via-front]`` with the
organiser token in ``MEDINA_ORGANISER_TOKEN``. ``MATCHES`` lanes each create a match at
ADDRESS, play it to the end (at the endpoint the answer names, or at ADDRESS with
``--via-front`` or when there is none) and start the next, for SECONDS. Prints one JSON
line: decisions answered within the time, the time, matches finished, and
the CPU time this process used. Uses only the
generated stubs.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import grpc
from medina.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    arena_pb2,
    arena_pb2_grpc,
    common_pb2,
    game_pb2,
    match_pb2,
)

CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # a connection per lane


def _action(request: arena_pb2.DecisionRequest) -> game_pb2.Action:
    legal = request.legal
    if not legal.placements:
        return game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)
    first = legal.placements[0]
    return game_pb2.Action(kind=first.kind, square=first.squares[0], colour=first.colour)


class Lanes:
    """The lanes' shared tally."""

    def __init__(self, address: str, deadline: float, via_front: bool) -> None:
        self.address = address
        self.deadline = deadline
        self.via_front = via_front
        self.decisions = 0
        self.matches = 0
        token = os.environ.get("MEDINA_ORGANISER_TOKEN", "")
        self.auth = (("authorization", f"Bearer {token}"),) if token else ()

    async def seat(self, channel: grpc.aio.Channel, token: str) -> None:
        """Play one seat to its end."""
        call = arena_pb2_grpc.ArenaServiceStub(channel).Play()
        hello = arena_pb2.Hello(
            protocol_version=1, bot_name="instant", token=token, omit_updates=True
        )
        await call.write(arena_pb2.PlayRequest(hello=hello))
        while True:
            message = await call.read()
            if not isinstance(message, arena_pb2.PlayResponse) or message.HasField("ended"):
                break
            if message.HasField("request"):
                request = message.request
                reply = arena_pb2.Reply(request_id=request.request_id, action=_action(request))
                await call.write(arena_pb2.PlayRequest(reply=reply))
                if time.monotonic() < self.deadline:
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
        clock = match_pb2.TimeControl(decision_ms=10_000, bank_ms=60_000)
        try:
            while time.monotonic() < self.deadline:
                config = match_pb2.MatchConfig(
                    ruleset=common_pb2.RULESET_MEDINA_V2, players=4, seed=seed, time_control=clock
                )
                seed += 1000
                created = await stub.CreateMatch(
                    admin_pb2.CreateMatchRequest(config=config), metadata=self.auth
                )
                use_front = self.via_front or not created.HasField("endpoint")
                where = channel(self.address if use_front else created.endpoint)
                await asyncio.gather(*(self.seat(where, t.token) for t in created.tokens))
                self.matches += 1
        finally:
            for c in channels.values():
                await c.close()


async def run(address: str, matches: int, seconds: float, via_front: bool) -> dict[str, float]:
    """Play for ``seconds`` with ``matches`` lanes; the tally."""
    started = time.monotonic()
    lanes = Lanes(address, started + seconds, via_front)
    await asyncio.gather(*(lanes.lane(seed) for seed in range(1, matches + 1)))
    return {
        "decisions": lanes.decisions,
        "seconds": seconds,
        "matches": lanes.matches,
        "cpu_s": time.process_time(),
    }


def main(argv: list[str]) -> int:
    """Entry point."""
    via_front = "--via-front" in argv
    address, matches, seconds = [a for a in argv if a != "--via-front"]
    tally = asyncio.run(run(address, int(matches), float(seconds), via_front))
    print(json.dumps(tally), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
