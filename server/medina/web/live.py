"""What every live page's stream is made of, wherever its match is played (``hosted`` for
this process's arena, ``remote`` for another server's): the protobuf JSON of the spectator
messages, the result for the pages, following the public events into a board and the score
plot's story, and the Server-Sent Events framing.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format

from medina.engine import GameFollower
from medina.v1 import game_pb2, match_pb2
from medina.wire import convert

from .story import Stories, Story
from .view import JSON

#: Seconds between keep-alive comments on an idle stream (proxies close silent ones).
KEEPALIVE_S = 15.0

#: The score plot's points of each match being watched, shared by its live pages.
STORIES = Stories()


def proto_json(message: Any) -> JSON:
    """A protobuf message in its JSON mapping (what any JSON client of the API reads)."""
    out: JSON = json_format.MessageToDict(message)
    return out


def result_json(res: match_pb2.MatchResult) -> JSON:
    """A match result for the pages: per seat rank, name, total and how it ended."""
    return {
        "ending": match_pb2.MatchEnding.Name(res.ending).removeprefix("MATCH_ENDING_").lower(),
        "seats": [
            {
                "seat": s.seat,
                "name": s.name,
                "total": s.total,
                "rank": s.rank,
                "termination": match_pb2.Termination.Name(s.termination)
                .removeprefix("TERMINATION_")
                .lower(),
                "detail": s.detail,
                "strikes": s.strikes,
            }
            for s in res.seats
        ],
    }


def by_referee(event: game_pb2.Event) -> bool:
    """Whether a history entry says the referee chose the move (protocol 1.1)."""
    which = event.WhichOneof("event")
    if which == "placed":
        return event.placed.by_referee
    if which == "tea_spent":
        return event.tea_spent.by_referee
    return False


def follow(follower: GameFollower, story: Story, event: game_pb2.Event) -> JSON | None:
    """Feed one spectator event to ``follower``; the story's new point when it was a
    decision the follower had not seen yet."""
    before = follower.state
    follower.feed(
        event.index,
        convert.action_of_event(event),
        str(event.WhichOneof("event")),
        by_referee=by_referee(event),
    )
    if follower.state is before:
        return None
    return story.step(before, follower.state)


def sse(message: JSON | None, event: str = "update") -> str:
    """One Server-Sent Events frame (a comment for None: a keep-alive)."""
    if message is None:
        return ": keep-alive\n\n"
    return f"event: {event}\ndata: {json.dumps(message, separators=(',', ':'))}\n\n"
