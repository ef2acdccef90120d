"""Check options and the scenarios' settings: clocks, policies, opponents, drills."""

from __future__ import annotations

import pytest
from medina.checkbot.scenarios import CHECKS, DESCRIPTIONS, CheckOptions
from medina.referee.config import TimeoutPolicy


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("seed", -1, "seed must be 0..2\\*\\*63-1, got -1"),
        ("decision_ms", 0, "decision_ms must be 1..3600000 ms, got 0"),
        ("tight_ms", 3_600_001, "tight_ms must be 1..3600000 ms, got 3600001"),
        ("first_extra_ms", -5, "first_extra_ms must be 0..3600000 ms, got -5"),
        ("grace_ms", -1, "grace_ms must be 0..3600000 ms, got -1"),
        ("reconnect_s", 0.0, "reconnect_s must be more than 0 and at most 3600 s, got 0.0"),
        ("exit_s", -1.0, "exit_s must be more than 0"),
        ("connect_s", 4000.0, "connect_s must be more than 0 and at most 3600 s, got 4000.0"),
        ("limit_s", 0.0, "limit_s must be more than 0"),
    ],
)
def test_bad_options_name_the_field_and_value(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CheckOptions(**{field: value})  # type: ignore[arg-type]


def test_an_unknown_check_lists_the_real_ones() -> None:
    with pytest.raises(
        ValueError, match="unknown check 'kind-palace'; the checks are: kind-building"
    ):
        CheckOptions(only=("kind-wall", "kind-palace"))


def test_only_selects_in_the_kits_order() -> None:
    assert CheckOptions().selected() == list(CHECKS)
    assert CheckOptions(only=("match-end", "kind-wall")).selected() == ["kind-wall", "match-end"]


def test_every_check_is_described() -> None:
    assert list(DESCRIPTIONS) == list(CHECKS)


def test_scenarios_use_the_options_clock_and_forfeit_at_the_first_timeout() -> None:
    options = CheckOptions(seed=4, decision_ms=1500, tight_ms=400, first_extra_ms=900, grace_ms=50)
    for name, build in CHECKS.items():
        scenario = build(options)
        assert scenario.name == name and scenario.seed == 4
        settings = scenario.settings()
        expected = 400 if name == "tight-clock" else 1500
        if name == "reconnect":  # the clock must outlast the reconnect grace
            expected = options_reconnect_ms(options) + 1000
        assert settings.time.decision_ms == expected
        assert settings.time.bank_ms == 0 and settings.time.increment_ms == 0
        assert settings.time.first_decision_extra_ms == 900 and settings.time.grace_ms == 50
        assert settings.policies.on_timeout is TimeoutPolicy.FORFEIT
        assert settings.policies.reconnect_grace_ms == 5000
        assert settings.connect_timeout_ms == 10_000


def options_reconnect_ms(options: CheckOptions) -> int:
    return int(options.reconnect_s * 1000)


def test_opponents_are_every_other_seat_and_named_after_their_policy() -> None:
    scenario = CHECKS["tight-clock"](CheckOptions())
    assert scenario.players == 4 and scenario.bot == 2
    assert scenario.opponents == {0: "greedy", 1: "random", 3: "random"}
    assert set(scenario.local_policies()) == {0, 1, 3}
    names = scenario.settings().seat_names
    assert names == ("check-bot greedy", "check-bot random", "", "check-bot random")


def test_drills_and_drops_are_where_the_checks_need_them() -> None:
    scenarios = {name: build(CheckOptions()) for name, build in CHECKS.items()}
    assert {n for n, s in scenarios.items() if s.drill_at} == {"rejection-retry"}
    assert {n for n, s in scenarios.items() if s.drop_after} == {"reconnect"}
    assert scenarios["match-end"].exit_s == CheckOptions().exit_s
    assert all(s.exit_s < 1 for n, s in scenarios.items() if n != "match-end")
