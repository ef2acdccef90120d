"""The matches of this process's arena as a ``MatchSource``: listed from ``Match.view()``
and followed as a spectator, exactly as a gRPC ``Watch`` spectator does (``Match.watch``): the
public snapshot, then the public events as they happen, then the result. Each message carries
those spectator messages (``watch``, the protobuf JSON mapping of ``WatchResponse``) and the
board drawn from them (``view``, built by following the events with the engine's
``GameFollower`` and observing as a spectator). Nothing polls the match's state.

The only module of the viewer that reads a ``Match`` (tests/test_architecture.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Sequence

from medina.engine import Event, GameFollower, GameState, observe, result
from medina.referee.match import Match
from medina.referee.outcome import MatchOutcome
from medina.referee.view import MatchPhase, MatchView
from medina.rpc.single.host import Arena
from medina.wire import matches as wire_matches

from .listing import MatchRow
from .live import KEEPALIVE_S, STORIES, follow, proto_json, result_json
from .source import Feed
from .story import Story
from .view import JSON, board_view


class ArenaSource:
    """The ``MatchSource`` of an arena running in this process."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    def views(self) -> list[MatchView]:
        """Every match in memory, oldest first."""
        return [h.match.view() for h in self.arena.matches.values()]

    def count(self, phase: MatchPhase) -> int:
        """How many matches in memory are in ``phase`` (the gauges of /metrics)."""
        return sum(1 for v in self.views() if v.phase is phase)

    async def rows(self) -> list[MatchRow]:
        # A pruned match leaves memory and this list, as it leaves the server's ListMatches.
        self.arena.forget_pruned(list(self.arena.matches.values()))
        rows: list[MatchRow] = []
        for h in reversed(list(self.arena.matches.values())):
            m = h.match.view()
            if m.outcome is not None:
                scores: list[int] | None = [s.total for s in m.outcome.seats]
            elif m.phase is MatchPhase.RUNNING:
                scores = list(result(m.state).totals)
            else:
                scores = None
            # An ended match's record was just found there (forget_pruned): one stat each.
            ended = m.outcome is not None
            record = h.record_path.stem if ended or h.record_path.exists() else None
            rows.append(
                MatchRow(
                    match_id=h.match_id,
                    ruleset=m.settings.ruleset,
                    players=m.settings.players,
                    bots=m.labels,
                    state=m.phase.name.lower(),
                    decisions=m.state.decisions,
                    scores=scores,
                    live=True,
                    record=record,
                )
            )
        return rows

    async def has_live_page(self, match_id: str) -> bool:
        # Any match still in memory, ended or not: its page shows the result.
        return self.arena.get(match_id) is not None

    async def feed(self, match_id: str) -> Feed | None:
        hosted = self.arena.get(match_id)
        if hosted is None:
            return None
        queue = self.arena.queue
        timing = hosted.timing
        return LiveWatch(
            hosted.match, note=(lambda: "") if queue is None else (lambda: queue.note(timing))
        ).messages


class _Feed:
    """A MatchObserver that queues what the match tells its spectators."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[int, Sequence[Event]] | MatchOutcome] = asyncio.Queue()

    def on_events(self, first_index: int, events: Sequence[Event]) -> None:
        self.queue.put_nowait((first_index, list(events)))

    def on_end(self, outcome: MatchOutcome) -> None:
        self.queue.put_nowait(outcome)


def clock_json(view: MatchView) -> JSON:
    """The seats' clocks as the referee keeps them (banks, last reply times)."""
    t = view.settings.time
    return {
        "decision_ms": t.decision_ms,
        "bank_ms": t.bank_ms,
        "seats": [
            {
                "bank_ms": s.bank_ms,
                "last_reply_ms": s.last_reply_ms,
                "allowed_ms": s.allowed_ms,
            }
            for s in view.seats
        ],
    }


#: Seconds between looks at a waiting match's note (its place in the start queue), which
#: changes with no event to say so.
WAITING_LOOK_S = 2.0


class LiveWatch:
    """One viewer of one match of this process; ``messages()`` yields the JSON messages.
    ``note``: what the server says of the match while it waits (its place in the start
    queue, ``StartQueue.note``), '' otherwise."""

    def __init__(self, match: Match, note: Callable[[], str] = lambda: "") -> None:
        self.match = match
        self.note = note

    @staticmethod
    def _view(view: MatchView, state: GameState) -> JSON:
        # Seat labels (``Match.seat_label``): the organiser's seat name when one was given,
        # else the bot's own name once it connected, else ``seat N``.
        return board_view(state, names=view.labels, start=len(view.settings.opening))

    async def messages(
        self, keepalive_s: float = KEEPALIVE_S, waiting_look_s: float = WAITING_LOOK_S
    ) -> AsyncGenerator[JSON | None, None]:
        """The snapshot, then one message per batch of news, the last with ``result``;
        while the match waits, a message (no news) whenever its note changes; None for a
        keep-alive when nothing was sent for ``keepalive_s``."""
        match = self.match
        feed = _Feed()
        _start, outcome = match.watch(feed)
        now = match.view()
        follower = GameFollower(now.state)
        snapshot = wire_matches.watch_snapshot(observe(follower.state, None))
        start = now.settings.new_game()
        story = Story(start)
        first: JSON = {
            "phase": now.phase.name.lower(),
            "note": self.note(),
            "watch": [proto_json(snapshot)],
            "view": self._view(now, follower.state),
            "clock": clock_json(now),
            "story": STORIES.history(match, story, start, follower.state),
        }
        if outcome is not None:
            ended = wire_matches.watch_result(outcome)
            first["watch"].append(proto_json(ended))
            first["result"] = result_json(ended.result)
            yield first
            return
        yield first
        said = (first["phase"], first["note"])
        sent_at = time.monotonic()
        try:
            while True:
                # A waiting match's note changes with no event: looked at every few seconds.
                wait_s = min(waiting_look_s, keepalive_s) if said[0] == "waiting" else keepalive_s
                try:
                    item = await asyncio.wait_for(feed.queue.get(), wait_s)
                except TimeoutError:
                    now = match.view()
                    if (now.phase.name.lower(), self.note()) != said:
                        message = self._batch(follower, story, [])
                        said = (message["phase"], message["note"])
                    elif time.monotonic() - sent_at < keepalive_s:
                        continue
                    else:
                        message = None
                    sent_at = time.monotonic()
                    yield message
                    continue
                batch = [item]
                while not feed.queue.empty():
                    batch.append(feed.queue.get_nowait())
                message = self._batch(follower, story, batch)
                said = (message["phase"], message["note"])
                sent_at = time.monotonic()
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
                ended = wire_matches.watch_result(item)
                watch.append(proto_json(ended))
                message["result"] = result_json(ended.result)
                continue
            first, events = item
            update = wire_matches.watch_update(first, events)
            watch.append(proto_json(update))
            for event in update.update.events:
                point = follow(follower, story, event)
                if point is not None:
                    points.append(point)
        now = self.match.view()
        message["phase"] = now.phase.name.lower()
        message["note"] = self.note()
        message["view"] = self._view(now, follower.state)
        message["clock"] = clock_json(now)
        return message


__all__ = ["ArenaSource", "LiveWatch", "clock_json"]
