"""The one reading of ``authorization`` metadata (rpc/common/auth.py: bearer): one value,
``Bearer <credential>`` with the scheme in any case; anything else is refused by name."""

from __future__ import annotations

import pytest
from medina.rpc.common.auth import CredentialError, bearer


def test_the_credential_of_one_bearer_value_in_any_case() -> None:
    assert bearer([("authorization", "Bearer abc")]) == "abc"
    assert bearer([("authorization", "bearer  abc ")]) == "abc"  # RFC 9110: any case
    assert bearer([("x-other", "1"), ("authorization", "BEARER abc")]) == "abc"
    assert bearer([]) == "" and bearer(None) == ""  # none given: the caller decides


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        ([("authorization", "abc")], "is not 'Bearer <credential>'"),  # was taken as it was
        ([("authorization", "Basic abc")], "is not 'Bearer <credential>'"),
        ([("authorization", "Bearer a"), ("authorization", "Bearer b")], "2 authorization"),
        ([("authorization", b"Bearer abc")], "is binary"),
    ],
)
def test_anything_else_is_refused_by_name(
    metadata: list[tuple[str, str | bytes]], said: str
) -> None:
    with pytest.raises(CredentialError, match=said):
        bearer(metadata)
