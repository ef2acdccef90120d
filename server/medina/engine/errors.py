"""Typed errors raised by the rules engine; every one subclasses ValueError."""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the engine raises on bad input."""


class UnknownRulesetError(EngineError):
    """The ruleset name is not one the engine implements."""


class PlayerCountError(EngineError):
    """The ruleset does not support this number of players."""


class SetupError(EngineError):
    """A setup override (start seat, well square, start merchant) is invalid."""


class NotationError(EngineError):
    """A square name or an ASCII board could not be parsed."""


#: Every rule code a refusal can carry, and what it means: a closed table (docs/protocol.md,
#: "Rule codes"; tests/test_protocol_tables.py keeps the engine, this table and the doc in
#: step, and checks which codes the doc says never come over the wire). A new code is a
#: protocol change: add it here and there.
RULE_CODES: dict[str, str] = {
    "already-claimed": "the palace already has a rooftop",
    "bad-action": "the action kind is not one the game has",
    "bad-colour": "a building needs a palace colour",
    "bad-square": "the square is off the board",
    "city-square": "only walls go on the wall ring",
    "colour-claimed": "the player already claimed (or blocked) a palace of this colour",
    "forced-rooftop": "medina-v1: the player must place a rooftop now",
    "game-over": "the game is over",
    "illegal": "not allowed here (no more specific rule applies)",
    "malformed": "the reply held no action the referee could read (ERROR_CODE_MALFORMED_ACTION)",
    "merchant-crowded": "a merchant may touch at most one other merchant",
    "must-expand": "an unclaimed palace of this colour can still grow: build on it",
    "no-such-piece": "this ruleset (or player count) has no such piece",
    "no-supply": "the player has no such piece left, or the colour left the game",
    "no-tea": "no tea break possible: no tea tiles in this ruleset, or none held",
    "occupied": "the square is not empty",
    "palace-separation": "the piece would touch another palace (of another colour, or claimed)",
    "rooftop-on-building": "a rooftop goes on a palace's building",
    "stable-adjacent": "a stable must be next to a building",
    "start-merchant": "the start merchant: it comes first, on an inner-city square",
    "street-end": "a merchant must extend the street at one of its ends",
    "tea-timing": "a tea break needs a placement first in this turn",
    "turn-limit": "one building per colour (and one rooftop of a kind) per turn",
    "wall-arm": "a wall must extend a tower's arm",
    "wall-gate": "a wall may not close the gate between two arms",
    "wall-space": "walls go only on wall spaces",
    "well-ring": "medina-v2: nothing on the squares next to the well",
}


class IllegalActionError(EngineError):
    """An action breaks a rule of the game.

    ``rule`` is a short stable code (for example ``"palace-separation"``), one of
    ``RULE_CODES``, that programs can switch on; the message explains the problem in
    words, naming squares in A1 notation.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
