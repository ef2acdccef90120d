"""Match ends a bot missed while its lobby stream was down, kept to tell it when it comes
back: its result and new rating would otherwise reach it only through the standings."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from medina.v1 import ladder_pb2

__all__ = ["KEEP_S", "PER_BOT", "MissedEnds"]

#: How long a missed LadderMatchEnded is kept for its bot (seconds).
KEEP_S = 3600.0
#: At most this many are kept per bot (the newest): a bot away for long reads the rest in
#: the standings.
PER_BOT = 32


class MissedEnds:
    """Per bot, the newest ``LadderMatchEnded`` responses it was not connected to receive,
    each with the monotonic time it was kept at."""

    def __init__(self, keep_s: float = KEEP_S, per_bot: int = PER_BOT) -> None:
        self.keep_s = keep_s
        self.per_bot = per_bot
        self._kept: dict[int, deque[tuple[float, ladder_pb2.LobbyResponse]]] = {}

    def keep(self, bot_id: int, messages: Iterable[ladder_pb2.LobbyResponse], now: float) -> None:
        """Keep ``messages`` (LadderMatchEnded responses, others are ignored) for ``bot_id``."""
        for message in messages:
            if message.WhichOneof("kind") != "ended":
                continue
            kept = self._kept.setdefault(bot_id, deque(maxlen=self.per_bot))
            kept.append((now, message))
        self._expire(now)

    def take(self, bot_id: int, now: float) -> list[ladder_pb2.LobbyResponse]:
        """What ``bot_id`` missed within the keeping time, oldest first; forgotten here."""
        self._expire(now)
        return [message for _at, message in self._kept.pop(bot_id, ())]

    def __len__(self) -> int:
        return sum(len(kept) for kept in self._kept.values())

    def _expire(self, now: float) -> None:
        for bot_id in list(self._kept):
            kept = self._kept[bot_id]
            while kept and now - kept[0][0] > self.keep_s:
                kept.popleft()
            if not kept:
                del self._kept[bot_id]
