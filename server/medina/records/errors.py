"""Typed errors of record handling."""

from __future__ import annotations


class RecordError(ValueError):
    """A record cannot be written or read; the message names the file, line and problem."""


class RecordReadError(RecordError):
    """The record's file cannot be read at all (missing, unreadable): a problem of the
    machine, not of the record's content."""
