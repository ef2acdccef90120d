"""Typed errors of record handling."""

from __future__ import annotations


class RecordError(ValueError):
    """A record cannot be written or read; the message names the file, line and problem."""
