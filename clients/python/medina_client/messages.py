"""The protocol as the SDK speaks it: the features its play loop asks for, over the
server's own conversions (``medina.wire.shared``, shipped in ``medina-protocol``): one
definition of every message, number and version on both sides.

The names here are the SDK's public message helpers; they are the shared ones, not copies.
"""

from __future__ import annotations

from collections.abc import Sequence

from medina.v1 import arena_pb2
from medina.wire.shared.actions import action_to_proto
from medina.wire.shared.client import hello as _hello
from medina.wire.shared.client import reply
from medina.wire.shared.config import game_from_config
from medina.wire.shared.enums import RULESET_NAMES
from medina.wire.shared.events import action_of_event
from medina.wire.shared.legal import actions_from_legal
from medina.wire.shared.protocol import PROTOCOL_MINOR, PROTOCOL_VERSION, REDIRECT

__all__ = [
    "FEATURES",
    "PROTOCOL_MINOR",
    "PROTOCOL_VERSION",
    "REDIRECT",
    "RULESET_NAMES",
    "action_of_event",
    "action_to_proto",
    "actions_from_legal",
    "features",
    "game_from_config",
    "hello",
    "reply",
]

#: Opt-in features the SDK's play loop handles (docs/protocol.md, "Versions and features").
FEATURES = ("forfeit-notices",)


def features(*, redirects: bool, asked: Sequence[str] = FEATURES) -> tuple[str, ...]:
    """The opt-in features to ask for: ``asked``, and redirects when the route allows them."""
    return (*asked, REDIRECT) if redirects else tuple(asked)


def hello(
    token: str,
    bot_name: str,
    bot_version: str,
    resume_token: str = "",
    omit_legal_actions: bool = False,
    omit_updates: bool = False,
    features: Sequence[str] = FEATURES,
) -> arena_pb2.PlayRequest:
    """The handshake message (protocol 1.1; by default asking for the opt-in features the
    SDK's play loop handles)."""
    return _hello(
        token, bot_name, bot_version, resume_token, omit_legal_actions, omit_updates, features
    )
