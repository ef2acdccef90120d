"""ListMatches: one ordering of live and stored matches, filters, and page tokens.

Matches are listed newest first: this server run's matches by creation time, then the
records of earlier runs by their file time. A page token names the sort key of the
last match of the previous page, so matches created between two calls never shift
a page (a new match sorts before every token and shows on a fresh first page).

A multi-worker front (``serve --workers N``) lists by merging: it passes the same token
to every worker, asks for each item's sort key (``SORT_KEYS_METADATA``, answered in the
trailing metadata), and cuts the merged list to the page size (``merge``).
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

#: Request metadata key asking a server for the sort keys of a ListMatches page; they come
#: back in the trailing metadata under the same key (``encode_keys``).
SORT_KEYS_METADATA = "medina-sort-keys"


class ListingError(ValueError):
    """A ListMatches request that cannot be answered (the message names the field)."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the listing."""

    items: list[Any]
    next_token: str
    total: int
    #: The sort key of each item, in order.
    keys: list[SortKey]


def page_size(requested: int | None) -> int:
    """The page size for a request: absent -> the default; 0 or above the maximum -> error."""
    if requested is None:
        return DEFAULT_PAGE_SIZE
    if not 1 <= requested <= MAX_PAGE_SIZE:
        raise ListingError(f"page_size {requested} is out of range (1..{MAX_PAGE_SIZE})")
    return requested


def encode_keys(keys: Iterable[SortKey]) -> str:
    """The sort keys of a page, as one metadata value."""
    return json.dumps([list(k) for k in keys])


def decode_keys(value: str) -> list[SortKey]:
    """The sort keys ``encode_keys`` wrote."""
    return [(int(g), float(o), str(m)) for g, o, m in json.loads(value)]


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


def paginate(
    entries: Iterable[tuple[SortKey, Any]], size: int, token: str, total: int | None = None
) -> Page:
    """The page after ``token`` of ``entries`` sorted newest first (highest key first).
    ``total`` is how many the whole listing holds when ``entries`` is only its head (records
    fetched from the catalog up to the page's end); None: ``entries`` is all of it."""
    after = decode_token(token)
    ordered = sorted(entries, key=lambda e: e[0], reverse=True)
    rest = [e for e in ordered if after is None or e[0] < after]
    return _cut(rest, size, more=False, total=len(ordered) if total is None else total)


def merge(pages: Iterable[Page], size: int, total: int) -> Page:
    """One page from the same page of several listings (each already after the same token):
    newest first, a match listed twice kept once (its newest entry), cut to ``size``."""
    best: dict[str, tuple[SortKey, Any]] = {}
    more = False
    for page in pages:
        more = more or bool(page.next_token)
        for key, item in zip(page.keys, page.items, strict=True):
            held = best.get(key[2])
            if held is None or key > held[0]:
                best[key[2]] = (key, item)
    ordered = sorted(best.values(), key=lambda e: e[0], reverse=True)
    return _cut(ordered, size, more=more, total=total)


def _cut(rest: list[tuple[SortKey, Any]], size: int, *, more: bool, total: int) -> Page:
    items = rest[:size]
    more = more or len(rest) > size
    return Page(
        items=[item for _key, item in items],
        next_token=encode_token(items[-1][0]) if more and items else "",
        total=total,
        keys=[key for key, _item in items],
    )
