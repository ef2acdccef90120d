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


class IllegalActionError(EngineError):
    """An action breaks a rule of the game.

    ``rule`` is a short stable code (for example ``"palace-separation"``) that
    programs can switch on; the message explains the problem in words, naming
    squares in A1 notation.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
