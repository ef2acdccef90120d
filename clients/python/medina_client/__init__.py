"""Medina Arena bot SDK: implement ``Bot.choose``, run it with ``play`` (or the CLI).

>>> from medina_client import Bot, Turn
>>> class First(Bot):
...     def choose(self, turn: Turn):
...         return turn.legal[0]

A policy over the fixed encoding (docs/encoding.md) plays with ``play_policy``; it and
``PolicyBot`` need numpy and are imported on first use, so the SDK itself does not.
"""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from .policy import PolicyBot, PolicyError, play_policy

#: Names served from ``medina_client.policy`` when first asked for (it imports numpy).
_LAZY = ("PolicyBot", "PolicyError", "play_policy")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import policy

        return getattr(policy, name)
    raise AttributeError(f"module 'medina_client' has no attribute {name!r}")


__all__ = [
    "Bot",
    "ConnectionLost",
    "HandshakeError",
    "LocalStateError",
    "MedinaClientError",
    "PolicyBot",
    "PolicyError",
    "ProtocolError",
    "SessionOver",
    "Turn",
    "play",
    "play_policy",
]
