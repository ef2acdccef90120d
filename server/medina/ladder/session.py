"""A bot connected to a ladder server's lobby: its stream's outgoing queue, the matches it
plays, and the heartbeats it owes an echo."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from medina.rpc.common.status import Refusal
from medina.storage.ladder import AccountRow, LineRow
from medina.v1 import ladder_pb2

__all__ = ["Session"]


@dataclass(eq=False)
class Session:
    """A bot connected to this server's lobby."""

    account: AccountRow
    line: LineRow
    hello: ladder_pb2.LobbyHello
    cap: int
    out: asyncio.Queue[ladder_pb2.LobbyResponse | None] = field(default_factory=asyncio.Queue)
    playing: set[int] = field(default_factory=set)
    leaving: bool = False
    idle_since: float = field(default_factory=time.monotonic)
    #: The other bots of its last match to end (``matchmaker.Candidate.last_match``).
    last_match: frozenset[int] = frozenset()
    heartbeats_sent: int = 0
    #: The newest heartbeat sequence echoed.
    echoed: int = 0
    #: When each heartbeat not echoed yet was sent (monotonic seconds), oldest first: each
    #: must be echoed within the heartbeat timeout of its own sending.
    unechoed: dict[int, float] = field(default_factory=dict)
    #: Why the server ends the stream (None: it ends OK, or the bot ended it).
    end: Refusal | None = None
    closed: bool = False
    #: The public id of the key the stream was opened with: a stream of a key since rotated
    #: is ended (a leaked key's holder keeps nothing).
    key_id: str = ""
    #: Opened on the loopback lobby of a ladder that serves TLS (its house bots): its
    #: matches are played at the arena's loopback address, in clear.
    local: bool = False
    #: When its presence was claimed in the database (the stamp its release names).
    connected_at: float = 0.0
    #: The bot sent Leave.
    said_leave: bool = False

    @property
    def bot_id(self) -> int:
        """The account id."""
        return self.account.id

    def send(self, message: ladder_pb2.LobbyResponse) -> None:
        """Queue a message for the bot."""
        if not self.closed:
            self.out.put_nowait(message)

    def heartbeat_sent(self, now: float) -> int:
        """Count a heartbeat sent at ``now``: its sequence."""
        self.heartbeats_sent += 1
        self.unechoed[self.heartbeats_sent] = now
        return self.heartbeats_sent

    def echo_due(self, timeout_s: float) -> tuple[int, float] | None:
        """The oldest heartbeat not echoed yet and when its echo is due; None: none is
        outstanding."""
        for sequence, sent in self.unechoed.items():
            return sequence, sent + timeout_s
        return None

    def why_ended(self) -> str:
        """Why the stream ended, for the log: the server's refusal (its reason and message),
        the bot's Leave, or the bot's side closing."""
        if self.end is not None:
            refused = self.end.refused
            return f"{refused.reason.value}: {refused.message}"
        return "it said Leave" if self.said_leave else "its stream ended (closed by the bot)"

    def finish(self, end: Refusal | None = None) -> None:
        """End the stream (with ``end``'s status, or OK)."""
        if not self.closed:
            self.end = end
            self.closed = True
            self.out.put_nowait(None)
