"""A game rebuilt from its public history: the one way the SDK's tracker and the match
console follow a game they only see through events.

Every history entry is either an action (a placement or a tea break) or a consequence
the engine derives itself (turn starts, tile moves, passes, the game's end). Following
means applying the actions in order and checking that the derived entries line up.
"""

from __future__ import annotations

from .errors import EngineError
from .state import GameState
from .turn import apply_action
from .types import Action, ActionKind, Event, EventKind

__all__ = ["FollowError", "GameFollower", "action_of"]


def action_of(event: Event) -> Action | None:
    """The action a history entry records (a placement or a tea break), else None."""
    if event.kind is EventKind.TEA_SPENT:
        return Action(ActionKind.TEA)
    if event.kind is not EventKind.PLACED:
        return None
    kind = ActionKind(event.piece)
    return Action(kind, event.square, event.colour if kind is ActionKind.BUILDING else -1)


class FollowError(EngineError):
    """The history cannot be followed (a gap, or an entry the local game does not produce)."""


class GameFollower:
    """A GameState kept in step with history entries fed in index order (repeats skipped)."""

    def __init__(self, state: GameState) -> None:
        self.state = state

    def feed(
        self, index: int, action: Action | None, what: str = "", *, by_referee: bool = False
    ) -> None:
        """Apply history entry ``index``: ``action`` if it records one, else None
        (``by_referee``: the entry says the referee chose the action for the seat).

        Entries the local game already has are skipped. Raises FollowError for a gap, for
        a derived entry where the local game expects an action, or for an action the
        engine refuses.
        """
        known = self.state.n_events
        if index < known:
            return
        if index > known:
            raise FollowError(f"history gap: expected event {known}, got {index}")
        if action is None:
            raise FollowError(
                f"event {index} ({what or 'not an action'}) does not follow from the local "
                "game: the local copy is out of step"
            )
        try:
            self.state = apply_action(self.state, action, by_referee=by_referee)
        except ValueError as exc:  # the engine's IllegalActionError among them
            raise FollowError(f"event {index}: {exc}") from exc
