"""Message helpers: medina.v1 protobuf <-> engine actions, and the messages a bot sends.

Only ``medina.v1`` and ``medina.engine`` are used here, so the SDK never pulls in
the server side. Protobuf palace colours are the engine colour + 1.
"""

from __future__ import annotations

from medina.engine import Action, ActionKind
from medina.v1 import arena_pb2, game_pb2

PROTOCOL_VERSION = 1

#: Ruleset enum value -> engine ruleset name.
RULESET_NAMES: dict[int, str] = {
    game_pb2.RULESET_MEDINA_V2: "medina-v2",
    game_pb2.RULESET_MEDINA_V1: "medina-v1",
    game_pb2.RULESET_MEDINA_V1_2P: "medina-v1-2p",
}

_KINDS = {int(k): k for k in ActionKind}
_BUILDING = ActionKind.BUILDING
_TEA = Action(ActionKind.TEA)


def action_to_proto(action: Action) -> game_pb2.Action:
    """Engine action -> protobuf (a tea break carries no square, a building its colour)."""
    if action.kind is ActionKind.TEA:
        return game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)
    msg = game_pb2.Action(kind=int(action.kind), square=action.square)  # type: ignore[arg-type]
    if action.colour >= 0:
        msg.colour = action.colour + 1  # type: ignore[assignment]
    return msg


def actions_from_legal(msg: game_pb2.LegalActions) -> list[Action]:
    """Every action a LegalActions message lists, in message order, tea last.

    Raises ValueError for an action kind this SDK does not know.
    """
    out: list[Action] = []
    for group in msg.placements:
        kind = _KINDS.get(group.kind)
        if kind is None:
            raise ValueError(f"legal actions name unknown action kind {int(group.kind)}")
        if kind is _BUILDING:
            colour = int(group.colour) - 1
            out.extend([Action(kind, sq, colour) for sq in group.squares])
        else:
            out.extend([Action(kind, sq) for sq in group.squares])
    if msg.tea:
        out.append(_TEA)
    return out


def action_of_event(msg: game_pb2.Event) -> Action | None:
    """The action a history entry records (a placement or a tea break), if any."""
    if msg.kind == game_pb2.EVENT_KIND_TEA_SPENT:
        return _TEA
    if msg.kind != game_pb2.EVENT_KIND_PLACED:
        return None
    kind = _KINDS.get(msg.piece)
    if kind is None:
        return None
    if kind is _BUILDING:
        return Action(kind, msg.square, int(msg.colour) - 1)
    return Action(kind, msg.square)


def hello(
    token: str,
    bot_name: str,
    bot_version: str,
    resume_token: str = "",
    omit_legal_actions: bool = False,
) -> arena_pb2.PlayRequest:
    """The handshake message (protocol version 1)."""
    return arena_pb2.PlayRequest(
        hello=arena_pb2.Hello(
            protocol_version=PROTOCOL_VERSION,
            bot_name=bot_name,
            bot_version=bot_version,
            token=token,
            resume_token=resume_token,
            omit_legal_actions=omit_legal_actions,
        )
    )


def reply(request_id: int, action: Action) -> arena_pb2.PlayRequest:
    """The answer to decision request ``request_id``."""
    return arena_pb2.PlayRequest(
        reply=arena_pb2.Reply(request_id=request_id, action=action_to_proto(action))
    )
