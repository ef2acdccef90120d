"""Bot keys: made, stored as a salted hash, checked in constant time.

A key is ``mdk_<key id>.<secret>``: the key id (public, stored plainly) finds the account
in one indexed lookup, the secret (256 random bits) is stored only as
``sha256(salt + secret)``. A slow password hash buys nothing against a 256-bit random
secret, and a fast one keeps a flood of wrong keys cheap to refuse.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from medina.boundary.terminal import control_character

__all__ = [
    "HOUSE_OWNER",
    "HOUSE_PREFIX",
    "BadKeyError",
    "NewKey",
    "check_name",
    "check_not_house",
    "check_owner",
    "hash_secret",
    "new_key",
    "parse_key",
    "verify",
]

PREFIX = "mdk_"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class BadKeyError(ValueError):
    """A string that is not a bot key at all (the message says why, never the key)."""


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key to hand out once, and what is stored of it."""

    key: str
    key_id: str
    salt: str
    digest: str


def check_name(name: str) -> str:
    """``name`` if it may name a bot account; ValueError saying what is wrong otherwise."""
    if not NAME.fullmatch(name):
        raise ValueError(
            f"bot name {name!r}: 1-64 characters, letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


#: The longest owner an account may name.
MAX_OWNER = 64


def check_owner(owner: str, what: str = "owner") -> str:
    """``owner`` if it may name who runs a bot (it is a column of the standings); ValueError
    naming ``what`` (the field or the option) and what is wrong otherwise."""
    if len(owner) > MAX_OWNER:
        raise ValueError(f"{what} is longer than {MAX_OWNER} characters")
    if (found := control_character(owner)) is not None:
        raise ValueError(f"{what} {owner!r} holds a control character ({found})")
    return owner


#: The owner of the house bots' accounts (``ladder serve --house``): reserved, as the names
#: the house gives them. A visitor's bot under this owner never met the house bots (one
#: owner's bots do not meet), the field's yardsticks; an account of a house name taken by
#: a visitor was taken over by the house bot at the next start.
HOUSE_OWNER = "house"
#: How the house bots' account names start (``house-greedy``) unless named otherwise.
HOUSE_PREFIX = "house-"


def check_not_house(name: str, owner: str) -> None:
    """ValueError naming the rule when an account added by hand (``bots add``, AddBot)
    would take a house name or the house's owner (either in any letter case: a lookalike
    of a yardstick is no better)."""
    if name.lower().startswith(HOUSE_PREFIX):
        raise ValueError(
            f"bot name {name!r}: names starting with {HOUSE_PREFIX!r} are reserved for the "
            "ladder's house bots (ladder serve --house)"
        )
    if owner.lower() == HOUSE_OWNER:
        raise ValueError(
            f"owner {owner!r} is reserved for the ladder's house bots (ladder serve --house)"
        )


def hash_secret(salt: str, secret: str) -> str:
    """The stored digest of a key's secret."""
    return hashlib.sha256(f"{salt}{secret}".encode()).hexdigest()


def new_key() -> NewKey:
    """A fresh key and what to store of it."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return NewKey(f"{PREFIX}{key_id}.{secret}", key_id, salt, hash_secret(salt, secret))


def parse_key(key: str) -> tuple[str, str]:
    """A key's (key id, secret); BadKeyError when ``key`` has not a key's shape."""
    body = key.strip()
    scheme, space, rest = body.partition(" ")
    if space and scheme.lower() == "bearer":  # the scheme is case-insensitive (RFC 9110)
        body = rest.strip()
    if not body.startswith(PREFIX):
        raise BadKeyError(f"a bot key starts with {PREFIX!r}")
    key_id, dot, secret = body[len(PREFIX) :].partition(".")
    if not dot or len(key_id) != 16 or not secret:
        raise BadKeyError("a bot key is mdk_<16 hex digits>.<secret>")
    return key_id, secret


def verify(secret: str, salt: str, digest: str) -> bool:
    """Whether ``secret`` is the one stored as ``digest`` (constant time)."""
    return hmac.compare_digest(hash_secret(salt, secret), digest)
