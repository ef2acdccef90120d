"""wire.settings: presence keeps zero apart from "the default", seat colours and fixed setups
travel, and the wire form of a result is checked field by field against the engine."""

from __future__ import annotations

import random

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from medina.engine import CONFIGURATIONS, apply_action, legal_moves, new_game, result
from medina.engine.scoring import Breakdown
from medina.referee.config import MatchSettings, Policies, TimeControl
from medina.referee.errors import ConfigError
from medina.v1 import common_pb2, match_pb2
from medina.wire import convert
from medina.wire.shared.scores import breakdown_to_proto


def test_zero_is_sent_as_zero_and_absent_takes_the_default() -> None:
    zero = MatchSettings(
        "medina-v2",
        4,
        1,
        time=TimeControl(decision_ms=100, bank_ms=0, increment_ms=0, grace_ms=0),
        policies=Policies(max_rejections=0, reconnect_grace_ms=0),
        connect_timeout_ms=0,
    )
    wire = convert.settings_to_proto(zero)
    assert wire.time_control.HasField("bank_ms") and wire.time_control.bank_ms == 0
    back = convert.settings_from_proto(wire)
    assert back == zero
    assert (back.time.bank_ms, back.time.grace_ms, back.policies.max_rejections) == (0, 0, 0)
    absent = convert.settings_from_proto(
        match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V2, players=4)
    )
    assert absent.time == TimeControl() and absent.policies == Policies()
    assert absent.connect_timeout_ms == MatchSettings("medina-v2", 4, 1).connect_timeout_ms


@pytest.mark.parametrize(
    ("time", "policies", "fragment"),
    [
        (
            match_pb2.TimeControl(decision_ms=0),
            match_pb2.Policies(),
            "decision_ms must be 1..3600000 ms, got 0",
        ),
        (match_pb2.TimeControl(), match_pb2.Policies(max_strikes=0), "max_strikes must be 1..1000"),
    ],
)
def test_a_zero_that_cannot_work_is_refused_by_name(
    time: match_pb2.TimeControl, policies: match_pb2.Policies, fragment: str
) -> None:
    config = match_pb2.MatchConfig(
        ruleset=common_pb2.RULESET_MEDINA_V2, players=2, time_control=time, policies=policies
    )
    with pytest.raises(ConfigError, match=fragment):
        convert.settings_from_proto(config)


def test_seat_colours_and_a_fixed_setup_travel_and_set_up_the_game() -> None:
    config = match_pb2.MatchConfig(
        ruleset=common_pb2.RULESET_MEDINA_V2,
        players=3,
        seed=5,
        seats=[
            match_pb2.SeatConfig(name="a", rooftop_colour=common_pb2.ROOFTOP_COLOUR_GREEN),
            match_pb2.SeatConfig(name="b", rooftop_colour=common_pb2.ROOFTOP_COLOUR_RED),
            match_pb2.SeatConfig(name="c", rooftop_colour=common_pb2.ROOFTOP_COLOUR_BLUE),
        ],
        setup=match_pb2.MatchSetup(well=60, start_merchant=100),
    )
    settings = convert.settings_from_proto(config)
    assert settings.rooftop_colours == (3, 0, 2) and (settings.well, settings.start_merchant) == (
        60,
        100,
    )
    s = settings.new_game()
    assert s.rules.rooftop_colours == (3, 0, 2) and s.rules.neutral_colour == 1  # yellow is free
    assert s.well == 60 and s.merchants == 1 << 100
    assert convert.settings_from_proto(convert.settings_to_proto(settings)) == settings


@pytest.mark.parametrize(
    ("seats", "setup", "fragment"),
    [
        ((1, 1, 3), None, "repeat a colour"),
        ((1, 2, 9), None, "seats\\[2\\].rooftop_colour 9 is not a rooftop colour"),
        ((0, 0, 0), match_pb2.MatchSetup(well=0), "inner-city square; A1 is not one"),
    ],
)
def test_bad_colours_and_setups_name_the_problem(
    seats: tuple[int, ...], setup: match_pb2.MatchSetup | None, fragment: str
) -> None:
    config = match_pb2.MatchConfig(
        ruleset=common_pb2.RULESET_MEDINA_V2,
        players=3,
        seats=[match_pb2.SeatConfig(rooftop_colour=c) for c in seats],  # type: ignore[arg-type]
        setup=setup,
    )
    with pytest.raises(ConfigError, match=fragment):
        convert.settings_from_proto(config)


_RENAMED = {"rooftop_square": "square"}


def _same_fields(wire: Message, plain: object, where: str) -> list[str]:
    """Every field of ``wire`` equals the attribute of ``plain`` it carries (colours + 1)."""
    problems = []
    for field in wire.DESCRIPTOR.fields:
        value = getattr(wire, field.name)
        expected = getattr(plain, _RENAMED.get(field.name, field.name))
        if field.name == "colour":
            expected += 1
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            continue
        if value != expected:
            problems.append(f"{where}.{field.name}: {value} != {expected}")
    return problems


def _breakdowns() -> list[Breakdown]:
    out: list[Breakdown] = []
    for ruleset, players in CONFIGURATIONS:
        rng = random.Random(7)
        s = new_game(ruleset, players, 7)
        while not s.over:
            moves = legal_moves(s)
            s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        out.extend(result(s).breakdowns)
    return out


def test_a_result_travels_field_by_field() -> None:
    breakdowns = _breakdowns()
    assert any(b.well_bonus for b in breakdowns) and any(b.tower_tiles for b in breakdowns)
    problems: list[str] = []
    for n, b in enumerate(breakdowns):
        wire = breakdown_to_proto(b)
        problems += _same_fields(wire, b, f"breakdown {n}")
        assert len(wire.palaces) == len(b.palaces)
        for i, (pw, pp) in enumerate(zip(wire.palaces, b.palaces, strict=True)):
            problems += _same_fields(pw, pp, f"breakdown {n} palace {i}")
    assert problems == []
