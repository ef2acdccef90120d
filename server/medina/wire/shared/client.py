"""The messages a client builds: a bot's ``Hello`` and replies, a ladder bot's lobby
messages, an organiser's plainest CreateMatch, and what the stdio bridge hands its program
(the server's messages re-wrapped, its own notices, a JSON action read into a message)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format

from medina.engine import Action
from medina.v1 import admin_pb2, arena_pb2, common_pb2, game_pb2, ladder_pb2, match_pb2

from .actions import action_to_proto
from .enums import RULESET_IDS
from .protocol import PROTOCOL_MINOR, PROTOCOL_VERSION

__all__ = [
    "action_from_json",
    "create_match",
    "hello",
    "lobby_heartbeat",
    "lobby_hello",
    "lobby_leave",
    "program_notice",
    "program_welcome",
    "reply",
    "with_clock",
]


def hello(
    token: str,
    bot_name: str,
    bot_version: str,
    resume_token: str = "",
    omit_legal_actions: bool = False,
    omit_updates: bool = False,
    features: Sequence[str] = (),
) -> arena_pb2.PlayRequest:
    """The handshake message of a Play stream, at this protocol's version."""
    return arena_pb2.PlayRequest(
        hello=arena_pb2.Hello(
            protocol_version=PROTOCOL_VERSION,
            bot_name=bot_name,
            bot_version=bot_version,
            token=token,
            resume_token=resume_token,
            omit_legal_actions=omit_legal_actions,
            omit_updates=omit_updates,
            protocol_minor=PROTOCOL_MINOR,
            features=features,
        )
    )


def reply(request_id: int, action: Action | game_pb2.Action) -> arena_pb2.PlayRequest:
    """The answer to decision request ``request_id`` (an engine action, or a message as
    the stdio bridge reads it from its program)."""
    msg = action_to_proto(action) if isinstance(action, Action) else action
    return arena_pb2.PlayRequest(reply=arena_pb2.Reply(request_id=request_id, action=msg))


def create_match(ruleset: str, players: int, seed: int) -> admin_pb2.CreateMatchRequest:
    """CreateMatch for a match of ``ruleset`` (``medina-v2``...) with ``players`` seats on
    ``seed``, every other setting the server's default: what an example or a script needs
    (the arena's own organisers build theirs from a full ``MatchSettings``). ValueError
    naming an unknown ruleset."""
    if ruleset not in RULESET_IDS:
        raise ValueError(f"unknown ruleset {ruleset!r} (expected one of {', '.join(RULESET_IDS)})")
    config = match_pb2.MatchConfig(
        ruleset=RULESET_IDS[ruleset],  # type: ignore[arg-type]
        players=players,
        seed=seed,
    )
    return admin_pb2.CreateMatchRequest(config=config)


def with_clock(
    request: arena_pb2.DecisionRequest, clock: arena_pb2.Clock
) -> arena_pb2.DecisionRequest:
    """A copy of ``request`` with the clock a rejection brought (the time left now)."""
    out = arena_pb2.DecisionRequest()
    out.CopyFrom(request)
    out.clock.CopyFrom(clock)
    return out


def lobby_hello(
    *,
    bot_version: str,
    rulesets: Sequence[str],
    players: Sequence[int],
    client: str,
    min_decision_ms: int | None,
    max_decision_ms: int | None,
    max_matches: int | None,
) -> ladder_pb2.LobbyRequest:
    """A ladder bot's first lobby message; None leaves an optional field absent (0 is a
    value: the ladder refuses ``max_matches`` 0)."""
    msg = ladder_pb2.LobbyHello(
        protocol_version=PROTOCOL_VERSION,
        protocol_minor=PROTOCOL_MINOR,
        bot_version=bot_version,
        rulesets=list(rulesets),
        players=list(players),
        client=client,
    )
    if min_decision_ms is not None:
        msg.min_decision_ms = min_decision_ms
    if max_decision_ms is not None:
        msg.max_decision_ms = max_decision_ms
    if max_matches is not None:
        msg.max_matches = max_matches
    return ladder_pb2.LobbyRequest(hello=msg)


def lobby_heartbeat(sequence: int) -> ladder_pb2.LobbyRequest:
    """The echo of the ladder's heartbeat ``sequence``."""
    return ladder_pb2.LobbyRequest(heartbeat=ladder_pb2.Heartbeat(sequence=sequence))


def lobby_leave() -> ladder_pb2.LobbyRequest:
    """Leave the ladder once the matches in play are over."""
    return ladder_pb2.LobbyRequest(leave=ladder_pb2.Leave())


def program_welcome(welcome: arena_pb2.Welcome) -> arena_pb2.PlayResponse:
    """The server's Welcome as the stdio bridge's program reads it."""
    return arena_pb2.PlayResponse(welcome=welcome)


def program_notice(request_id: int, text: str) -> arena_pb2.PlayResponse:
    """A protocol notice from the stdio bridge itself to its program."""
    return arena_pb2.PlayResponse(
        notice=arena_pb2.Notice(
            code=common_pb2.ERROR_CODE_PROTOCOL, request_id=request_id, message=text
        )
    )


def action_from_json(data: dict[str, Any]) -> game_pb2.Action:
    """A JSON object in protobuf's JSON mapping -> an Action message; ValueError with the
    library's reason when it is not one."""
    action = game_pb2.Action()
    try:
        json_format.ParseDict(data, action)
    except json_format.ParseError as exc:
        raise ValueError(" ".join(str(exc).split())) from None  # its message spans lines
    return action
