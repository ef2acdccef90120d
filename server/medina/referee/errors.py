"""Typed errors of the referee."""

from __future__ import annotations


class RefereeError(ValueError):
    """Base class of the referee's errors."""


class ConfigError(RefereeError):
    """A match configuration value is invalid; the message names the field and the value.

    ``field`` is the setting it is about (``time_control.decision_ms``), when it is one, and
    ``problem`` the message without it (``must be 1..3600000 ms, got 0``): a caller that
    names its settings its own way (a tournament file's ``[clock] decision_ms``) says that.
    """

    def __init__(self, message: str, field: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.problem = problem or message

    @classmethod
    def of(cls, field: str, problem: str) -> ConfigError:
        """``field`` is wrong: the message is ``field problem``."""
        return cls(f"{field} {problem}", field, problem)
