"""Match settings: documented defaults, and every bad field rejected with its name and value."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from medina.engine import RULESETS
from medina.engine.variants import CONFIGURATIONS
from medina.referee.config import (
    DEFAULT_BANK_MS,
    DEFAULT_CONNECT_TIMEOUT_MS,
    DEFAULT_DECISION_MS,
    DEFAULT_FIRST_DECISION_EXTRA_MS,
    DEFAULT_GRACE_MS,
    DEFAULT_INCREMENT_MS,
    DEFAULT_MAX_REJECTIONS,
    DEFAULT_MAX_STRIKES,
    DEFAULT_RECONNECT_GRACE_MS,
    LIMIT_MS,
    MatchSettings,
    Policies,
    TimeControl,
    TimeoutPolicy,
)
from medina.referee.errors import ConfigError, RefereeError

SUPPORTED = list(CONFIGURATIONS)


def test_defaults() -> None:
    s = MatchSettings("medina-v2", 4, seed=1)
    assert s.start_seat == 0
    assert s.time == TimeControl(
        DEFAULT_DECISION_MS,
        DEFAULT_BANK_MS,
        DEFAULT_INCREMENT_MS,
        DEFAULT_FIRST_DECISION_EXTRA_MS,
        DEFAULT_GRACE_MS,
    )
    assert s.policies == Policies(
        TimeoutPolicy.RANDOM_ACTION,
        DEFAULT_MAX_STRIKES,
        DEFAULT_MAX_REJECTIONS,
        DEFAULT_RECONNECT_GRACE_MS,
    )
    assert s.connect_timeout_ms == DEFAULT_CONNECT_TIMEOUT_MS
    assert s.seat_names == ()


@pytest.mark.parametrize(("ruleset", "players"), SUPPORTED)
def test_every_supported_ruleset_and_player_count_is_accepted(ruleset: str, players: int) -> None:
    s = MatchSettings(ruleset, players, seed=2**64 - 1, start_seat=players - 1)
    assert (s.ruleset, s.players) == (ruleset, players)
    assert {r for r, _ in SUPPORTED} == set(RULESETS)


def test_settings_are_frozen() -> None:
    s = MatchSettings("medina-v2", 2, seed=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.seed = 2  # type: ignore[misc]


def test_seat_names() -> None:
    s = MatchSettings("medina-v2", 3, seed=1, seat_names=("alice", "", "carol"))
    assert [s.seat_name(i) for i in range(3)] == ["alice", "seat 1", "carol"]
    assert MatchSettings("medina-v2", 2, seed=1).seat_name(1) == "seat 1"


def test_zero_is_a_valid_value_for_every_clock_setting_but_the_decision_limit() -> None:
    t = TimeControl(decision_ms=1, bank_ms=0, increment_ms=0, first_decision_extra_ms=0, grace_ms=0)
    p = Policies(max_rejections=0, reconnect_grace_ms=0)
    s = MatchSettings("medina-v2", 2, seed=0, time=t, policies=p, connect_timeout_ms=0)
    assert s.time.bank_ms == 0 and s.policies.max_rejections == 0


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, RefereeError)
    assert issubclass(ConfigError, ValueError)


Build = Callable[[], object]

# name, construction, fragments the message must contain (the field, the bad value)
BAD: list[tuple[str, Build, tuple[str, ...]]] = [
    ("unknown ruleset", lambda: MatchSettings("medina-v3", 2, seed=1), ("ruleset", "medina-v3")),
    ("empty ruleset", lambda: MatchSettings("", 2, seed=1), ("ruleset", "''")),
    ("too many players", lambda: MatchSettings("medina-v2", 5, seed=1), ("players", "5")),
    ("too few players", lambda: MatchSettings("medina-v2", 1, seed=1), ("players", "1")),
    ("v1 has no 2p", lambda: MatchSettings("medina-v1", 2, seed=1), ("players", "2")),
    ("v1-2p is 2p only", lambda: MatchSettings("medina-v1-2p", 3, seed=1), ("players", "3")),
    ("negative seed", lambda: MatchSettings("medina-v2", 2, seed=-1), ("seed", "-1")),
    ("huge seed", lambda: MatchSettings("medina-v2", 2, seed=2**64), ("seed", str(2**64))),
    (
        "start seat past the last",
        lambda: MatchSettings("medina-v2", 4, seed=1, start_seat=4),
        ("start_seat", "4"),
    ),
    (
        "negative start seat",
        lambda: MatchSettings("medina-v2", 2, seed=1, start_seat=-1),
        ("start_seat", "-1"),
    ),
    (
        "too few seat names",
        lambda: MatchSettings("medina-v2", 4, seed=1, seat_names=("a", "b", "c")),
        ("seats", "3"),
    ),
    (
        "too many seat names",
        lambda: MatchSettings("medina-v2", 2, seed=1, seat_names=("a", "b", "c")),
        ("seats", "3"),
    ),
    (
        "long seat name",
        lambda: MatchSettings("medina-v2", 2, seed=1, seat_names=("x" * 101, "b")),
        ("seat name", "xxxx"),
    ),
    (
        "negative connect timeout",
        lambda: MatchSettings("medina-v2", 2, seed=1, connect_timeout_ms=-1),
        ("connect_timeout_ms", "-1"),
    ),
    (
        "huge connect timeout",
        lambda: MatchSettings("medina-v2", 2, seed=1, connect_timeout_ms=LIMIT_MS + 1),
        ("connect_timeout_ms", str(LIMIT_MS + 1)),
    ),
    ("zero decision", lambda: TimeControl(decision_ms=0), ("time_control.decision_ms", "0")),
    ("negative decision", lambda: TimeControl(decision_ms=-5), ("time_control.decision_ms", "-5")),
    (
        "huge decision",
        lambda: TimeControl(decision_ms=LIMIT_MS + 1),
        ("time_control.decision_ms", str(LIMIT_MS + 1)),
    ),
    ("negative bank", lambda: TimeControl(bank_ms=-1), ("time_control.bank_ms", "-1")),
    (
        "huge bank",
        lambda: TimeControl(bank_ms=10 * LIMIT_MS),
        ("time_control.bank_ms", str(10 * LIMIT_MS)),
    ),
    (
        "negative increment",
        lambda: TimeControl(increment_ms=-1),
        ("time_control.increment_ms", "-1"),
    ),
    (
        "negative first extra",
        lambda: TimeControl(first_decision_extra_ms=-1),
        ("time_control.first_decision_extra_ms", "-1"),
    ),
    ("negative grace", lambda: TimeControl(grace_ms=-1), ("time_control.grace_ms", "-1")),
    ("float grace", lambda: TimeControl(grace_ms=2.5), ("time_control.grace_ms", "2.5")),  # type: ignore[arg-type]
    ("zero strikes", lambda: Policies(max_strikes=0), ("policies.max_strikes", "0")),
    ("huge strikes", lambda: Policies(max_strikes=1001), ("policies.max_strikes", "1001")),
    (
        "negative rejections",
        lambda: Policies(max_rejections=-1),
        ("policies.max_rejections", "-1"),
    ),
    (
        "huge rejections",
        lambda: Policies(max_rejections=1001),
        ("policies.max_rejections", "1001"),
    ),
    (
        "negative reconnect grace",
        lambda: Policies(reconnect_grace_ms=-1),
        ("policies.reconnect_grace_ms", "-1"),
    ),
    (
        "unknown timeout policy",
        lambda: Policies(on_timeout=7),  # type: ignore[arg-type]
        ("policies.on_timeout", "7"),
    ),
]


@pytest.mark.parametrize(("name", "build", "fragments"), BAD, ids=[b[0] for b in BAD])
def test_bad_value_raises_config_error_naming_field_and_value(
    name: str, build: Build, fragments: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{name}: {fragment!r} not in {message!r}"


def test_bad_nested_setting_fails_before_the_match_settings_exist() -> None:
    with pytest.raises(ConfigError, match=r"policies\.max_strikes"):
        MatchSettings("medina-v2", 2, seed=1, policies=Policies(max_strikes=0))
