"""The protocol's version and features (docs/protocol.md, "Versions and features").

A 1.x server speaks every 1.0 message. What 1.1 added to existing messages (new fields)
reaches every bot, since receivers ignore fields they do not know; what it added as new
message kinds is sent only to a bot that asked for it by name in ``Hello.features``.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "ALWAYS_ON",
    "OPT_IN",
    "PROTOCOL_MINOR",
    "PROTOCOL_VERSION",
    "REDIRECT",
    "features_for",
]

#: The major version: ``Hello.protocol_version``.
PROTOCOL_VERSION = 1
#: The minor version this server speaks: ``Welcome.protocol_minor``.
PROTOCOL_MINOR = 1

#: Features every stream has (new fields of existing messages), by name.
ALWAYS_ON: tuple[str, ...] = (
    "error-info",  # statuses that end a stream or refuse a call carry google.rpc.ErrorInfo
    "scores",  # SeatView.score: every seat's public score in every observation
    "initial-supplies",  # Welcome.initial_supplies
    "referee-moves",  # Placed.by_referee and TeaSpent.by_referee
    "bank-left",  # Clock.bank_left_ms (absent: no bank) and Clock.strikes_left
    "rejected-squares",  # Rejected.squares
)
#: Features a bot turns on by naming them in ``Hello.features`` (new message kinds).
OPT_IN: tuple[str, ...] = (
    "forfeit-notices",  # PlayResponse.forfeited (SeatForfeited) when any seat forfeits
    "redirect",  # PlayResponse.redirect: a multi-process server sends the bot to its match
)
#: The feature name of redirects.
REDIRECT = "redirect"


def features_for(asked: Iterable[str]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The features in effect for a bot that asked for ``asked`` (Welcome.features, in a
    stable order), and the opt-in ones among them. Unknown names are ignored."""
    wanted = set(asked)
    granted = tuple(f for f in OPT_IN if f in wanted)
    return ALWAYS_ON + granted, frozenset(granted)
