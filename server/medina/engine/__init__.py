"""The rules of Medina as a pure, standard-library-only engine.

Typical use::

    from medina.engine import new_game, legal_moves, apply_action, result
    s = new_game("medina-v2", 4, seed=7)
    while not s.over:
        s = apply_action(s, legal_moves(s).nth(0))
    print(result(s).totals)
"""

from .errors import (
    EngineError,
    IllegalActionError,
    NotationError,
    PlayerCountError,
    SetupError,
    UnknownRulesetError,
)
from .follow import FollowError, GameFollower
from .geometry import Geometry, Mask, Square, squares
from .movegen import LegalMoves, legal_actions, legal_moves
from .notation import describe_supply, parse_square, render, square_name, squares_named
from .observe import Observation, PalaceView, PlayerView, observe
from .position import from_picture
from .scoring import Breakdown, PalaceScore, Result, ranks, result
from .setup import initial_supplies, new_game
from .state import GameState, Phase
from .turn import apply_action, is_legal
from .types import NEUTRAL, NOBODY, UNCLAIMED, Action, ActionKind, Event, EventKind, Palace, Supply
from .variants import (
    CONFIGURATIONS,
    PALACE_COLOURS,
    ROOFTOP_COLOURS,
    RULESETS,
    Ruleset,
    get_ruleset,
)

__all__ = [
    "CONFIGURATIONS",
    "NEUTRAL",
    "NOBODY",
    "PALACE_COLOURS",
    "ROOFTOP_COLOURS",
    "RULESETS",
    "UNCLAIMED",
    "Action",
    "ActionKind",
    "Breakdown",
    "EngineError",
    "Event",
    "EventKind",
    "FollowError",
    "GameFollower",
    "GameState",
    "Geometry",
    "IllegalActionError",
    "LegalMoves",
    "Mask",
    "NotationError",
    "Observation",
    "Palace",
    "PalaceScore",
    "PalaceView",
    "Phase",
    "PlayerCountError",
    "PlayerView",
    "Result",
    "Ruleset",
    "SetupError",
    "Square",
    "Supply",
    "UnknownRulesetError",
    "apply_action",
    "describe_supply",
    "from_picture",
    "get_ruleset",
    "initial_supplies",
    "is_legal",
    "legal_actions",
    "legal_moves",
    "new_game",
    "observe",
    "parse_square",
    "ranks",
    "render",
    "result",
    "square_name",
    "squares",
    "squares_named",
]
