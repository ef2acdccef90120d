"""The game's story for the score plot: every seat's score after each decision, and the
moments worth marking on it (a palace claimed, a palace or tower tile taken).

A point is ``{"step": N, "scores": [...], "marks": [...]}``: step N is the board after N
decisions counted from the game's start (after a scripted opening, as the replay page
counts), the scores are the engine's (``result``), the same public scores every seat view
carries. The replay sends every point at once; the live stream sends the points so far
first, then each new one as it happens.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from medina.engine import (
    PALACE_COLOURS,
    ActionKind,
    Event,
    EventKind,
    FollowError,
    GameFollower,
    GameState,
    result,
)
from medina.engine.follow import action_of

from .view import JSON


def marks(events: Sequence[Event]) -> list[JSON]:
    """The marks of one decision's history entries: claims and tiles taken by a seat."""
    out: list[JSON] = []
    for e in events:
        if e.kind is EventKind.PLACED and e.piece == ActionKind.ROOFTOP:
            colour = PALACE_COLOURS[e.colour]
            out.append({"seat": e.seat, "kind": "claim", "text": f"claims the {colour} palace"})
        elif e.kind is EventKind.PALACE_TILE and e.target >= 0:
            colour = PALACE_COLOURS[e.colour]
            out.append(
                {"seat": e.target, "kind": "tile", "text": f"takes the {colour} palace tile"}
            )
        elif e.kind is EventKind.TOWER_TILE and e.target >= 0:
            out.append(
                {"seat": e.target, "kind": "tile", "text": f"takes the tower {e.tower + 1} tile"}
            )
    return out


class Story:
    """Points of a game that starts at ``start`` (its step 0)."""

    def __init__(self, start: GameState) -> None:
        self.base = start.decisions

    def point(self, state: GameState, events: Sequence[Event] = ()) -> JSON:
        """The point of ``state``, marked with what ``events`` (the entries of the decision
        that led to it) did."""
        return {
            "step": state.decisions - self.base,
            "scores": list(result(state).totals),
            "marks": marks(events),
        }

    def step(self, before: GameState, after: GameState) -> JSON:
        """The point of the decision that took ``before`` to ``after``."""
        return self.point(after, after.events_since(before.n_events))

    def history(self, start: GameState, now: GameState) -> list[JSON]:
        """Every point from ``start`` to ``now``, rebuilt by following ``now``'s public
        history from ``start``; only ``now``'s point when the two do not line up."""
        follower = GameFollower(start)
        points = [self.point(start)]
        try:
            for index, event in enumerate(now.events_since(start.n_events), start.n_events):
                action = action_of(event)
                if index < follower.state.n_events or action is None:
                    continue
                before = follower.state
                follower.feed(index, action, by_referee=event.by_referee)
                points.append(self.step(before, follower.state))
        except FollowError:
            return [self.point(now)]
        return points


class Stories:
    """The story so far of each match being watched, shared by its viewers: the first page
    opened on a match follows its history once (tens of milliseconds for a whole game),
    later ones only the decisions made since."""

    def __init__(self) -> None:
        self._known: weakref.WeakKeyDictionary[object, tuple[GameState, list[JSON]]] = (
            weakref.WeakKeyDictionary()
        )

    def history(self, match: object, story: Story, start: GameState, now: GameState) -> list[JSON]:
        """``story.history(start, now)`` for ``match`` (whose game goes on from ``start``
        to ``now``), reusing what an earlier call for it worked out."""
        known = self._known.get(match)
        if known is None or known[0].n_events > now.n_events:
            points = story.history(start, now)
        else:
            state, points = known
            more = story.history(state, now)
            points = points + more[1:] if more[0]["step"] == points[-1]["step"] else more
        self._known[match] = (now, points)
        return list(points)
