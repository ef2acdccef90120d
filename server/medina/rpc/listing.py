"""ListMatches: one ordering of live and stored matches, filters, and page tokens.

Matches are listed newest first: this server run's matches by creation, then the
records of earlier runs by their file time. A page token names the sort key of the
last match of the previous page, so matches created between two calls never shift
a page (a new match sorts before every token and shows on a fresh first page).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000

#: (0 for an earlier run's record / 1 for this run, order within the group, match id).
SortKey = tuple[int, float, str]


class ListingError(ValueError):
    """A ListMatches request that cannot be answered (the message names the field)."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the listing."""

    items: list[Any]
    next_token: str
    total: int


def page_size(requested: int | None) -> int:
    """The page size for a request: absent -> the default; 0 or above the maximum -> error."""
    if requested is None:
        return DEFAULT_PAGE_SIZE
    if not 1 <= requested <= MAX_PAGE_SIZE:
        raise ListingError(f"page_size {requested} is out of range (1..{MAX_PAGE_SIZE})")
    return requested


def encode_token(key: SortKey) -> str:
    """An opaque page token for the listing after ``key``."""
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


def decode_token(token: str) -> SortKey | None:
    """The sort key a page token stands for; None for the empty token (first page)."""
    if not token:
        return None
    try:
        group, order, match_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        return (int(group), float(order), str(match_id))
    except (ValueError, TypeError) as exc:
        raise ListingError(
            f"page_token {token[:40]!r} is not a token from a previous ListMatches answer"
        ) from exc


def paginate(entries: Iterable[tuple[SortKey, Any]], size: int, token: str) -> Page:
    """The page after ``token`` of ``entries`` sorted newest first (highest key first)."""
    after = decode_token(token)
    ordered = sorted(entries, key=lambda e: e[0], reverse=True)
    rest = [e for e in ordered if after is None or e[0] < after]
    items = rest[:size]
    more = len(rest) > size
    return Page(
        items=[item for _key, item in items],
        next_token=encode_token(items[-1][0]) if more else "",
        total=len(ordered),
    )
