"""A bot that tries the organiser's calls on the server it plays on (Python SDK): at its first
decision it lists the running matches, forfeits every other seat of its own and aborts it,
then plays the first legal action. Each call's status goes, one line each, to the file
``MEDDLER_OUT`` names."""

from __future__ import annotations

import asyncio
import os

import grpc
from medina.engine import Action
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2
from medina_client import Bot, Turn, play

SERVER = os.environ["MEDINA_SERVER"]


def attempt(what: str, call: object, request: object) -> object:
    """Make one call; its status (OK or the code) goes to the out file."""
    try:
        answer = call(request, timeout=10)  # type: ignore[operator]
        status = "OK"
    except grpc.RpcError as exc:
        answer, status = None, exc.code().name
    with open(os.environ["MEDDLER_OUT"], "a") as out:
        out.write(f"{what} {status}\n")
    return answer


class Meddler(Bot):
    """Meddles once, then plays the first legal action."""

    name = "meddler"
    meddled = False
    match_id = ""
    players = 0

    def on_start(self, welcome: arena_pb2.Welcome) -> None:
        """Note the match and its size."""
        self.match_id = welcome.match_id
        self.players = len(welcome.observation.seats)

    def choose(self, turn: Turn) -> Action:
        """The first legal action, after the meddling."""
        if not self.meddled:
            self.meddled = True
            with grpc.insecure_channel(SERVER) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                attempt("list", stub.ListMatches, admin_pb2.ListMatchesRequest())
                match_id = self.match_id
                for seat in range(self.players):
                    if seat != turn.seat:
                        request = admin_pb2.ForfeitSeatRequest(
                            match_id=match_id, seat=seat, reason="its bot exited"
                        )
                        attempt("forfeit", stub.ForfeitSeat, request)
                abort = admin_pb2.AbortMatchRequest(match_id=match_id, reason="losing")
                attempt("abort", stub.AbortMatch, abort)
        return turn.legal[0]


if __name__ == "__main__":
    asyncio.run(play(Meddler(), SERVER, os.environ["MEDINA_TOKEN"]))
