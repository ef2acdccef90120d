"""The kit's referee hook: one drill rejection of a legal reply, and one dropped stream."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from medina.engine import Action
from medina.referee.record import ErrorCode, Rejection

#: Rule code of the kit's drill rejection (never an engine rule).
DRILL_RULE = "check-bot-drill"


def drill_message(request_id: int) -> str:
    """The text of the drill rejection: says plainly that nothing was wrong."""
    return (
        f"drill: check-bot refuses this legal reply once on purpose to test your retry; "
        f"answer request {request_id} again"
    )


class Drills:
    """Judges the bot's replies for one scenario (a ``medina.referee.match.Judge``).

    The bot's requests are counted as their first legal reply is judged. The
    ``drill_at``-th is refused once with a drill rejection; after the
    ``drop_after``-th is accepted, ``drop`` is called (soon, from the event loop) to
    drop the bot's stream. Zero turns either off.
    """

    def __init__(self, bot: int, drill_at: int, drop_after: int, drop: Callable[[], None]) -> None:
        self.bot = bot
        self.drill_at = drill_at
        self.drop_after = drop_after
        self.drop = drop
        self.requests: list[int] = []  # the bot's judged request ids, in order
        self.drilled = 0  # the request refused as a drill
        self.dropped_after = 0  # the request after whose reply the stream was dropped

    def __call__(self, seat: int, request_id: int, action: Action) -> Rejection | None:
        """Refuse the drill request's first legal reply; accept everything else."""
        if seat != self.bot:
            return None
        if request_id not in self.requests:
            self.requests.append(request_id)
        n = self.requests.index(request_id) + 1
        if n == self.drill_at and not self.drilled:
            self.drilled = request_id
            return Rejection(
                action, ErrorCode.ILLEGAL_ACTION, DRILL_RULE, drill_message(request_id)
            )
        if n == self.drop_after and not self.dropped_after:
            self.dropped_after = request_id
            # After the referee has taken the reply: the drop must not race the judging.
            asyncio.get_running_loop().call_soon(self.drop)
        return None


__all__ = ["DRILL_RULE", "Drills", "drill_message"]
