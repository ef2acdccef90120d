"""A running match followed as a spectator: the arena's Watch feed, as JSON for Server-Sent
Events.

A viewer subscribes exactly as a gRPC ``Watch`` spectator does (``Match.watch``): it gets the
public snapshot, then the public events as they happen, then the result. Each message carries
those spectator messages (``watch``, the protobuf JSON mapping of ``WatchResponse``) and the
board drawn from them (``view``, built by following the events with the engine's
``GameFollower`` and observing as a spectator). Nothing polls the match's state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from google.protobuf import json_format

from medina.engine import Event, GameFollower, GameState, observe
from medina.referee.match import Match
from medina.referee.outcome import MatchOutcome
from medina.v1 import admin_pb2, game_pb2, match_pb2
from medina.wire import convert

from .story import Stories, Story
from .view import JSON, board_view

#: Seconds between keep-alive comments on an idle stream (proxies close silent ones).
KEEPALIVE_S = 15.0

#: The score plot's points of each match being watched, shared by its live pages.
STORIES = Stories()


class _Feed:
    """A MatchObserver that queues what the match tells its spectators."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[int, Sequence[Event]] | MatchOutcome] = asyncio.Queue()

    def on_events(self, first_index: int, events: Sequence[Event]) -> None:
        self.queue.put_nowait((first_index, list(events)))

    def on_end(self, outcome: MatchOutcome) -> None:
        self.queue.put_nowait(outcome)


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


def clock_json(match: Match) -> JSON:
    """The seats' clocks as the referee keeps them (banks, last reply times)."""
    t = match.settings.time
    return {
        "decision_ms": t.decision_ms,
        "bank_ms": t.bank_ms,
        "seats": [
            {
                "bank_ms": s.bank_ms,
                "last_reply_ms": s.last_reply_ms,
                "allowed_ms": s.allowed_ms,
            }
            for s in match.view().seats
        ],
    }


def names_of(match: Match) -> list[str]:
    """Seat labels (``Match.seat_label``): the organiser's seat name when one was given,
    else the bot's own name once it connected, else ``seat N``."""
    return [match.seat_label(i) for i in range(match.settings.players)]


class LiveWatch:
    """One viewer of one match; ``messages()`` yields the JSON messages to send."""

    def __init__(self, match: Match) -> None:
        self.match = match

    def _view(self, state: GameState) -> JSON:
        return board_view(state, names=names_of(self.match))

    async def messages(self, keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[JSON | None]:
        """The snapshot, then one message per batch of news, the last with ``result``;
        None for a keep-alive when nothing happened for ``keepalive_s``."""
        match = self.match
        feed = _Feed()
        _start, outcome = match.watch(feed)
        follower = GameFollower(match.state)
        snapshot = convert.observation_to_proto(observe(follower.state, None))
        start = match.settings.new_game()
        story = Story(start)
        first: JSON = {
            "phase": match.phase.name.lower(),
            "watch": [proto_json(admin_pb2.WatchResponse(snapshot=snapshot))],
            "view": self._view(follower.state),
            "clock": clock_json(match),
            "story": STORIES.history(match, story, start, follower.state),
        }
        if outcome is not None:
            res = convert.outcome_to_proto(outcome)
            first["watch"].append(proto_json(admin_pb2.WatchResponse(result=res)))
            first["result"] = result_json(res)
            yield first
            return
        yield first
        try:
            while True:
                try:
                    item = await asyncio.wait_for(feed.queue.get(), keepalive_s)
                except TimeoutError:
                    yield None
                    continue
                batch = [item]
                while not feed.queue.empty():
                    batch.append(feed.queue.get_nowait())
                message = self._batch(follower, story, batch)
                yield message
                if "result" in message:
                    return
        finally:
            match.unwatch(feed)

    def _batch(
        self,
        follower: GameFollower,
        story: Story,
        batch: list[tuple[int, Sequence[Event]] | MatchOutcome],
    ) -> JSON:
        watch: list[JSON] = []
        points: list[JSON] = []
        message: JSON = {"watch": watch, "story": points}
        for item in batch:
            if isinstance(item, MatchOutcome):
                res = convert.outcome_to_proto(item)
                watch.append(proto_json(admin_pb2.WatchResponse(result=res)))
                message["result"] = result_json(res)
                continue
            first, events = item
            protos = convert.events_to_proto(first, events)
            watch.append(proto_json(admin_pb2.WatchResponse(update=game_pb2.Update(events=protos))))
            for event in protos:
                point = follow(follower, story, event)
                if point is not None:
                    points.append(point)
        message["phase"] = self.match.phase.name.lower()
        message["view"] = self._view(follower.state)
        message["clock"] = clock_json(self.match)
        return message


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
