"""Typed errors of the referee."""

from __future__ import annotations


class RefereeError(ValueError):
    """Base class of the referee's errors."""


class ConfigError(RefereeError):
    """A match configuration value is invalid; the message names the field and the value."""
