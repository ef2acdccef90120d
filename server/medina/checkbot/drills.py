"""The kit's seat wrapper: one drill refusal of a legal reply, and one dropped stream.

It sits on the path from the bot's seat to the referee (the seat's ``submit``), so the
referee needs no hook: a drill reaches it as a reply it cannot take, which it refuses
and records like any other (``ERROR_CODE_MALFORMED_ACTION``, the message saying it is a
drill, the action the bot sent kept), and the bot is asked again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from medina.referee.seat import ReplySignal, Signal
from medina.wire.convert import action_to_proto

#: Every drill refusal's message starts with this (never an engine message).
DRILL_PREFIX = "drill: "


def drill_message(request_id: int) -> str:
    """The text of the drill refusal: says plainly that nothing was wrong."""
    return (
        f"{DRILL_PREFIX}check-bot refuses this legal reply once on purpose to test your retry; "
        f"answer request {request_id} again"
    )


class Drills:
    """Screens the bot's replies for one scenario on their way to the referee.

    The bot's requests are counted as their first reply arrives. The ``drill_at``-th
    reply is turned into a refusal once; after the ``drop_after``-th is passed on, ``drop``
    is called (soon, from the event loop) to drop the bot's stream. Zero turns either off.
    """

    def __init__(
        self,
        bot: int,
        drill_at: int,
        drop_after: int,
        submit: Callable[[Signal], None],
        drop: Callable[[], None],
    ) -> None:
        self.bot = bot
        self.drill_at = drill_at
        self.drop_after = drop_after
        self.submit = submit
        self.drop = drop
        self.requests: list[int] = []  # the bot's answered request ids, in order
        self.drilled = 0  # the request refused as a drill
        self.dropped_after = 0  # the request after whose reply the stream was dropped

    def __call__(self, signal: Signal) -> None:
        """Pass ``signal`` on to the referee, or the drill refusal in place of a reply."""
        if not isinstance(signal, ReplySignal) or signal.action is None:
            self.submit(signal)
            return
        rid = signal.request_id
        if rid not in self.requests:
            self.requests.append(rid)
        n = self.requests.index(rid) + 1
        if n == self.drill_at and not self.drilled:
            self.drilled = rid
            raw = action_to_proto(signal.action).SerializeToString()  # kept in the record
            self.submit(
                ReplySignal(signal.seat, rid, None, signal.received_at, drill_message(rid), raw)
            )
            return
        self.submit(signal)
        if n == self.drop_after and not self.dropped_after:
            self.dropped_after = rid
            # After the reply is in the referee's inbox: it is judged before the drop.
            asyncio.get_running_loop().call_soon(self.drop)


__all__ = ["DRILL_PREFIX", "Drills", "drill_message"]
