"""Medina Arena bot SDK: implement ``Bot.choose``, run it with ``play`` (or the CLI).

>>> from medina_client import Bot, Turn
>>> class First(Bot):
...     def choose(self, turn: Turn):
...         return turn.legal[0]
"""

from .bot import Bot, Turn
from .errors import (
    ConnectionLost,
    HandshakeError,
    LocalStateError,
    MedinaClientError,
    ProtocolError,
    SessionOver,
)
from .runner import play

__all__ = [
    "Bot",
    "ConnectionLost",
    "HandshakeError",
    "LocalStateError",
    "MedinaClientError",
    "ProtocolError",
    "SessionOver",
    "Turn",
    "play",
]
