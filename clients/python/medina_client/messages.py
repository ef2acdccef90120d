"""Message helpers: medina.v1 protobuf <-> engine actions, and the messages a bot sends.

Only ``medina.v1`` and ``medina.engine`` are used here, so the SDK never pulls in
the server side. The wire numbers colours and towers from 1 (0: unspecified), the
engine from 0; ``_colour`` and ``_engine_colour`` are the SDK's one place for that.
"""

from __future__ import annotations

from collections.abc import Sequence

from medina.engine import Action, ActionKind, GameState, new_game
from medina.v1 import arena_pb2, common_pb2, game_pb2, match_pb2

PROTOCOL_VERSION = 1
#: The minor version this SDK speaks (protocol 1.1).
PROTOCOL_MINOR = 1
#: Opt-in features the SDK's play loop handles (docs/protocol.md, "Versions and features").
FEATURES = ("forfeit-notices",)
#: The feature of redirects to the process holding the match (followed by the play loop).
REDIRECT = "redirect"


def features(*, redirects: bool, asked: Sequence[str] = FEATURES) -> tuple[str, ...]:
    """The opt-in features to ask for: ``asked``, and redirects when the route allows them."""
    return (*asked, REDIRECT) if redirects else tuple(asked)


#: Ruleset enum value -> engine ruleset name.
RULESET_NAMES: dict[int, str] = {
    common_pb2.RULESET_MEDINA_V2: "medina-v2",
    common_pb2.RULESET_MEDINA_V1: "medina-v1",
    common_pb2.RULESET_MEDINA_V1_2P: "medina-v1-2p",
}


def _colour(engine_colour: int) -> int:
    """Engine colour (0..3) -> wire colour number (1..4)."""
    return engine_colour + 1


def _engine_colour(wire_colour: int) -> int:
    """Wire colour number (1..4) -> engine colour (0..3); -1 for 0 (unspecified)."""
    return int(wire_colour) - 1 if wire_colour else -1


_KINDS = {int(k): k for k in ActionKind}
_BUILDING = ActionKind.BUILDING
_TEA = Action(ActionKind.TEA)


def action_to_proto(action: Action) -> game_pb2.Action:
    """Engine action -> protobuf (a tea break carries no square, a building its colour)."""
    if action.kind is ActionKind.TEA:
        return game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)
    msg = game_pb2.Action(kind=int(action.kind), square=action.square)  # type: ignore[arg-type]
    if action.colour >= 0:
        msg.colour = _colour(action.colour)  # type: ignore[assignment]
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
            colour = _engine_colour(group.colour)
            out.extend([Action(kind, sq, colour) for sq in group.squares])
        else:
            out.extend([Action(kind, sq) for sq in group.squares])
    if msg.tea:
        out.append(_TEA)
    return out


def action_of_event(msg: game_pb2.Event) -> Action | None:
    """The action a history entry records (a placement or a tea break), if any."""
    which = msg.WhichOneof("event")
    if which == "tea_spent":
        return _TEA
    if which != "placed":
        return None
    placed = msg.placed
    kind = _KINDS.get(placed.piece)
    if kind is None:
        return None
    if kind is _BUILDING:
        return Action(kind, placed.square, _engine_colour(placed.colour))
    return Action(kind, placed.square)


def game_from_config(config: match_pb2.MatchConfig) -> GameState:
    """The game a match configuration starts: ruleset, seed, start seat, the seats'
    rooftop colours and any fixed setup. ValueError (naming the problem) when it cannot
    be set up locally."""
    ruleset = RULESET_NAMES.get(int(config.ruleset))
    if ruleset is None:
        raise ValueError(f"unknown ruleset {int(config.ruleset)} in the match config")
    own = [_engine_colour(s.rooftop_colour) for s in config.seats]
    blocking = [_engine_colour(s.blocking_colour) for s in config.seats]
    setup = config.setup
    return new_game(
        ruleset,
        config.players,
        config.seed,
        start_seat=config.start_seat,
        well=setup.well if setup.HasField("well") else None,
        start_merchant=setup.start_merchant if setup.HasField("start_merchant") else None,
        rooftop_colours=own if own and min(own) >= 0 else None,
        blocking_colours=blocking if blocking and min(blocking) >= 0 else None,
    )


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


def reply(request_id: int, action: Action) -> arena_pb2.PlayRequest:
    """The answer to decision request ``request_id``."""
    return arena_pb2.PlayRequest(
        reply=arena_pb2.Reply(request_id=request_id, action=action_to_proto(action))
    )
