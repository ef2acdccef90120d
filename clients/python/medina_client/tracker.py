"""Keeps a local engine copy of the game by replaying the public history.

The setup follows from the match config (ruleset, players, seed, start seat) and
every decision appears in the history as a placement or a tea break, so the
whole game state — including what the opponents still hold, which the table
could deduce too — is rebuilt exactly.
"""

from __future__ import annotations

from collections.abc import Iterable

from medina.engine import GameState, apply_action, new_game
from medina.v1 import game_pb2, match_pb2
from medina.wire.convert import action_of_event
from medina.wire.enums import RULESET_NAMES


class GameTracker:
    """A GameState kept in step with the events a seat receives."""

    def __init__(self, config: match_pb2.MatchConfig) -> None:
        ruleset = RULESET_NAMES.get(int(config.ruleset))
        if ruleset is None:
            raise ValueError(f"unknown ruleset {int(config.ruleset)} in the match config")
        self.state: GameState = new_game(
            ruleset, config.players, config.seed, start_seat=config.start_seat
        )

    def feed(self, events: Iterable[game_pb2.Event]) -> None:
        """Apply the events not known yet; those the engine derives itself are skipped."""
        for event in events:
            known = self.state.n_events
            if event.index < known:
                continue
            if event.index > known:
                raise ValueError(f"history gap: expected event {known}, got {event.index}")
            action = action_of_event(event)
            if action is None:
                raise ValueError(
                    f"event {event.index} ({game_pb2.EventKind.Name(event.kind)}) does not "
                    "follow from the local game: the local copy is out of step"
                )
            self.state = apply_action(self.state, action)
