"""Secrets: seat, resume and organiser tokens — unguessable, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A fresh 192-bit secret: 48 hex digits, so it never looks like a command-line option
    (a URL-safe token may start with "-")."""
    return secrets.token_hex(24)


def token_key(token: str) -> str:
    """A lookup key for a token that does not reveal it (used as a dict key, never logged)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def same_token(given: str, expected: str) -> bool:
    """Constant-time comparison."""
    return hmac.compare_digest(
        given.encode("utf-8", "replace"), expected.encode("utf-8", "replace")
    )
