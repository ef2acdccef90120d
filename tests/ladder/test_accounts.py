"""Bot keys: their shape, their hash, and what is refused."""

from __future__ import annotations

import pytest
from medina.ladder import accounts


def test_a_new_key_verifies_and_another_secret_does_not() -> None:
    made = accounts.new_key()
    key_id, secret = accounts.parse_key(made.key)
    assert key_id == made.key_id
    assert accounts.verify(secret, made.salt, made.digest)
    assert not accounts.verify(secret + "x", made.salt, made.digest)
    assert made.digest != accounts.hash_secret(accounts.new_key().salt, secret)  # salted
    assert secret not in made.digest


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_bearer_prefix_is_accepted(scheme: str) -> None:
    # "bearer KEY" was refused as malformed, "a bot key starts with 'mdk_'", which the key
    # the bot author looked at did.
    made = accounts.new_key()
    assert accounts.parse_key(f"{scheme} {made.key}") == accounts.parse_key(made.key)


@pytest.mark.parametrize(
    "text", ["", "Bearer ", "abc", "mdk_", "mdk_0123456789abcdef", "mdk_short.secret"]
)
def test_strings_that_are_not_keys_are_refused_without_echoing_them(text: str) -> None:
    with pytest.raises(accounts.BadKeyError) as caught:
        accounts.parse_key(text)
    assert "mdk_" in str(caught.value)


@pytest.mark.parametrize("name", ["greedy", "bot-1", "a.b_c", "X" * 64])
def test_good_names(name: str) -> None:
    assert accounts.check_name(name) == name


@pytest.mark.parametrize("name", ["", "-lead", "has space", "X" * 65, "é"])
def test_bad_names_are_refused_with_the_rule(name: str) -> None:
    with pytest.raises(ValueError, match="1-64 characters"):
        accounts.check_name(name)
