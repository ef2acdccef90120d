"""A1 notation and the ASCII board picture (docs/rules.md section 2, notation.py)."""

from __future__ import annotations

import pytest
from medina.engine import (
    ActionKind,
    Event,
    EventKind,
    GameFollower,
    NotationError,
    apply_action,
    legal_moves,
    new_game,
    parse_square,
    render,
    square_name,
)
from medina.engine.follow import action_of
from medina.engine.geometry import geometry
from medina.engine.notation import describe_move, parse_tokens

from .support import act, picture, position


@pytest.mark.parametrize(
    ("row", "col", "name"),
    [(0, 0, "A1"), (1, 1, "B2"), (12, 17, "R13"), (6, 5, "F7"), (9, 2, "C10")],
)
def test_square_names_round_trip(row: int, col: int, name: str) -> None:
    g = geometry(18, 13)
    assert square_name(g, g.square(row, col)) == name
    assert parse_square(g, name) == g.square(row, col)
    assert parse_square(g, name.lower()) == g.square(row, col)


@pytest.mark.parametrize(
    ("text", "words"),
    [("", "bad square name"), ("7F", "bad square name"), ("F", "bad square name"),
     ("S1", "off the board"), ("A14", "off the board"), ("A0", "off the board")],
)  # fmt: skip
def test_bad_square_names_raise_notation_error(text: str, words: str) -> None:
    with pytest.raises(NotationError, match=words):
        parse_square(geometry(18, 13), text)


def test_small_board_ends_at_p12() -> None:
    g = geometry(16, 12)
    assert parse_square(g, "P12") == g.size - 1
    with pytest.raises(NotationError, match=r"A1\.\.P12"):
        parse_square(g, "Q1")


def test_render_tokens() -> None:
    s = new_game("medina-v2", 4, seed=3, well=3 * 18 + 3, start_merchant=5 * 18 + 5)
    # Seats 0 and 1 place one piece, seat 2 (blue) two, seat 3 two.
    s = act(s, "wall B1", "grey H4", "grey H5", "roof H5", "stable I5", "merchant F7")
    lines = render(s).splitlines()
    assert lines[0].split() == [chr(ord("A") + c) for c in range(18)]
    assert lines[1].split()[:3] == ["1", "T1", "##"]
    assert lines[1].split()[-1] == "T3"
    assert lines[13].split()[1] == "T4" and lines[13].split()[-1] == "T2"
    assert lines[4].split()[4] == "@@"
    assert lines[4].split()[8] == "gB"  # H4: a grey building under a blue rooftop
    assert lines[5].split()[8:10] == ["GB", "sB"]  # H5 carries the rooftop; I5 its stable
    assert lines[6].split()[6] == "MM" and lines[7].split()[6] == "MM"  # F6, F7


def test_unclaimed_and_dead_street_tokens() -> None:
    marks = {"C3": "b.", "C4": "s.", "H8": "mm", "K8": "MM"}
    lines = render(position("medina-v2", 4, marks)).splitlines()
    assert lines[3].split()[3] == "b." and lines[4].split()[3] == "s."
    assert lines[8].split()[8] == "mm" and lines[8].split()[11] == "MM"


def test_parse_tokens_reads_render_output() -> None:
    text = picture("medina-v2", 2, {"C3": "p."})
    tokens = parse_tokens(geometry(16, 12), text)
    assert len(tokens) == 16 * 12
    assert tokens[2 * 16 + 2] == "p."


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda t: t.replace("\n 2 ", "\n 3 ", 1), "expected row 2, found 3"),
        (lambda t: t.replace(" T3\n", "\n", 1), "row 1 has 17 squares, expected 18"),
        (lambda t: t.rsplit("\n", 1)[0], "12 rows, expected 13"),
    ],
)
def test_parse_tokens_rejects_bad_shapes(edit: object, words: str) -> None:
    assert callable(edit)
    with pytest.raises(NotationError, match=words):
        parse_tokens(geometry(18, 13), edit(picture("medina-v1", 4)))


def test_refusals_use_the_right_article() -> None:
    from medina.engine.notation import a_or_an

    assert [a_or_an(c) for c in ("grey", "purple", "brown", "orange")] == [
        "a grey",
        "a purple",
        "a brown",
        "an orange",
    ]


PLACED, K = EventKind.PLACED, ActionKind


@pytest.mark.parametrize(
    ("event", "text"),
    [
        (Event(PLACED, 0, K.BUILDING, 205, 2), "brown building H12"),
        (Event(PLACED, 1, K.ROOFTOP, 165, 0), "rooftop on grey D10"),
        (Event(PLACED, 1, K.NEUTRAL_ROOFTOP, 165, 1), "neutral rooftop on purple D10"),
        (Event(PLACED, 0, K.BLOCKING_ROOFTOP, 165, 3), "blocking rooftop on orange D10"),
        (Event(PLACED, 0, K.STABLE, 19), "stable B2"),
        (Event(PLACED, 0, K.WALL, 1), "wall B1"),
        (Event(PLACED, 0, K.START_MERCHANT, 19), "start merchant B2"),
        (Event(EventKind.TEA_SPENT, 2), "tea break"),
        (Event(EventKind.PASSED, 2), "passes"),
        (Event(EventKind.PALACE_TILE, colour=1, target=2), None),
        (Event(EventKind.GAME_OVER), None),
    ],
)
def test_moves_have_one_notation(event: Event, text: str | None) -> None:
    assert describe_move(geometry(18, 13), event) == text


def test_a_followed_game_keeps_the_referees_marks() -> None:
    """Following a history action by action rebuilds it exactly, referee marks included."""
    s = new_game("medina-v2", 3, seed=4)
    actual = s
    for n in range(12):
        actual = apply_action(actual, legal_moves(actual).nth(n % 3), by_referee=n % 4 == 1)
    follower = GameFollower(s)
    for index, event in enumerate(actual.events_since(s.n_events), start=s.n_events):
        follower.feed(index, action_of(event), by_referee=event.by_referee)
    assert follower.state.events_since(0) == actual.events_since(0)
    assert any(e.by_referee for e in follower.state.events_since(0))
