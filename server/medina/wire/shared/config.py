"""The game a ``MatchConfig`` starts, as an engine state: what a bot needs to follow the
match locally from the public history (RULES 9: every supply is deducible)."""

from __future__ import annotations

from medina.engine import GameState, new_game
from medina.v1 import match_pb2

from .enums import RULESET_NAMES, rooftop_colour_from_proto

__all__ = ["game_from_config"]


def game_from_config(config: match_pb2.MatchConfig) -> GameState:
    """The game a match configuration starts: ruleset, seed, start seat, the seats'
    rooftop colours and any fixed setup. ValueError (naming the problem) when it cannot
    be set up locally."""
    ruleset = RULESET_NAMES.get(int(config.ruleset))
    if ruleset is None:
        raise ValueError(f"unknown ruleset {int(config.ruleset)} in the match config")
    own = [rooftop_colour_from_proto(s.rooftop_colour) for s in config.seats]
    blocking = [rooftop_colour_from_proto(s.blocking_colour) for s in config.seats]
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
