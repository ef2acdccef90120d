"""ListMatches ordering and page tokens, and a front's merge of several servers' pages."""

from __future__ import annotations

import pytest
from medina.rpc.common.listing import (
    ListingError,
    Page,
    SortKey,
    decode_keys,
    decode_token,
    encode_keys,
    encode_token,
    merge,
    paginate,
)


def entries(*keys: SortKey) -> list[tuple[SortKey, str]]:
    return [(k, k[2]) for k in keys]


def test_keys_and_tokens_round_trip() -> None:
    keys: list[SortKey] = [(1, 1700000000.25, "abc"), (0, 12.5, "d")]
    assert decode_keys(encode_keys(keys)) == keys
    assert decode_token(encode_token(keys[0])) == keys[0]
    assert decode_token("") is None
    with pytest.raises(ListingError, match="not a token from a previous ListMatches"):
        decode_token("garbage!")


def test_merging_the_same_page_of_each_server_pages_the_union() -> None:
    # Two workers' matches (created at interleaved times) and records of earlier runs.
    a = entries((1, 5.0, "a5"), (1, 3.0, "a3"), (1, 1.0, "a1"), (0, 9.0, "old2"))
    b = entries((1, 4.0, "b4"), (1, 2.0, "b2"), (0, 8.0, "old1"))
    union = sorted(a + b, reverse=True)
    for size in (1, 2, 3, 7, 10):
        token, seen = "", []
        while True:
            pages = [paginate(a, size, token), paginate(b, size, token)]
            page = merge(pages, size, total=len(a) + len(b))
            assert page.total == 7 and len(page.items) <= size
            seen.extend(page.items)
            token = page.next_token
            if not token:
                break
        assert seen == [item for _key, item in union], size


def test_a_match_listed_by_two_servers_is_kept_once_at_its_newest_key() -> None:
    one = Page(["live"], "", 1, [(1, 5.0, "m")])
    two = Page(["record", "x"], "", 2, [(0, 9.0, "m"), (0, 1.0, "x")])
    page = merge([one, two], 10, total=2)
    assert page.items == ["live", "x"] and page.next_token == ""


def test_a_server_with_more_gives_a_next_token_even_when_the_cut_is_exact() -> None:
    one = Page(["a"], encode_token((1, 5.0, "a")), 3, [(1, 5.0, "a")])
    page = merge([one, Page([], "", 0, [])], 1, total=3)
    assert page.items == ["a"] and decode_token(page.next_token) == (1, 5.0, "a")
