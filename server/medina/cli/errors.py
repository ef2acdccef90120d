"""The CLI's error type."""

from __future__ import annotations


class CommandError(Exception):
    """A command could not run; the message says why (exit code 2)."""
