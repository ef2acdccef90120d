"""The encoding (medina_client.encoding): the action index, its errors, the conformance
fixtures and the tables of docs/encoding.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from google.protobuf import json_format
from medina.engine import Action, ActionKind, get_ruleset, new_game, observe
from medina.v1 import game_pb2
from medina.wire.shared.observation import observation_to_proto
from medina_client import encoding as enc
from medina_client.encoding import EncodingError

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "encoding").glob("*.json"))
DOC = (ROOT / "docs" / "encoding.md").read_text()


def test_the_sizes_are_the_documented_ones() -> None:
    assert (enc.PLANE_COUNT, enc.ROWS, enc.COLS) == (25, 13, 18)
    assert enc.VECTOR_SIZE == 181
    assert enc.ACTION_COUNT == 2575 and enc.TEA_INDEX == 2574


@pytest.mark.parametrize(("cols", "rows"), [(18, 13), (16, 12)])
def test_every_action_has_one_index_and_back(cols: int, rows: int) -> None:
    seen: set[int] = set()
    for kind, colour in enc.ACTION_SLOTS:
        for sq in range(cols * rows):
            action = Action(kind, sq, colour)
            index = enc.action_index(action, cols, rows)
            assert enc.action_of_index(index, cols, rows) == action
            seen.add(index)
    tea = Action(ActionKind.TEA)
    assert enc.action_of_index(enc.action_index(tea, cols, rows), cols, rows) == tea
    assert len(seen) == len(enc.ACTION_SLOTS) * cols * rows


@pytest.mark.parametrize(("cols", "rows"), [(18, 13), (16, 12)])
def test_the_table_of_actions_is_action_of_index(cols: int, rows: int) -> None:
    """The environments' lookup table gives what action_of_index gives, None where it
    refuses (a cell off the grid)."""
    table = enc.actions_of_indices(cols, rows)
    assert len(table) == enc.ACTION_COUNT
    off = 0
    for index, action in enumerate(table):
        try:
            expected: Action | None = enc.action_of_index(index, cols, rows)
        except EncodingError:
            expected = None
            off += 1
        assert action == expected, index
    assert off == len(enc.ACTION_SLOTS) * (enc.CELLS - cols * rows)


def test_a_square_keeps_its_cell_on_the_small_board() -> None:
    # C3 on the 16 x 12 board is square 2 * 16 + 2; on the canvas it is cell (2, 2).
    index = enc.action_index(Action(ActionKind.STABLE, 2 * 16 + 2), 16, 12)
    assert index == 7 * enc.CELLS + 2 * enc.COLS + 2
    assert enc.describe_action(index) == "stable at (row 2, col 2)"


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (-1, "outside 0..2574"),
        (2575, "outside 0..2574"),
        (17, "names cell (0, 17), off the 16 x 12 grid"),
        (12 * 18, "names cell (12, 0), off the 16 x 12 grid"),
    ],
)
def test_indices_off_the_grid_are_refused(index: int, message: str) -> None:
    with pytest.raises(EncodingError, match=re.escape(message)):
        enc.action_of_index(index, 16, 12)


def test_actions_without_an_index_are_refused() -> None:
    with pytest.raises(EncodingError, match="no action index"):
        enc.action_index(Action(ActionKind.BUILDING, 20, -1), 18, 13)
    with pytest.raises(EncodingError, match="square 300 is off"):
        enc.action_index(Action(ActionKind.WALL, 300), 18, 13)


def test_a_spectators_view_is_refused() -> None:
    obs = observation_to_proto(observe(new_game("medina-v2", 3, 1), None))
    with pytest.raises(EncodingError, match="no viewer"):
        enc.encode(obs)


def test_unknown_cells_and_kinds_are_refused() -> None:
    obs = observation_to_proto(observe(new_game("medina-v2", 3, 1), 0))
    obs.board.cells[20] = game_pb2.Cell.ValueType(12)  # a cell value a later ruleset might add
    with pytest.raises(EncodingError, match=re.escape("cell values outside 1..11")):
        enc.encode(obs)
    legal = game_pb2.LegalActions()
    legal.placements.add(kind=game_pb2.ActionKind.ValueType(10), squares=[20])
    with pytest.raises(EncodingError, match="unknown action kind 10"):
        enc.encode_mask(legal, 18, 13)


def test_the_viewer_is_seat_slot_zero() -> None:
    s = new_game("medina-v2", 4, 5)
    for seat in range(4):
        v = enc.encode_vector(observation_to_proto(observe(s, seat)))
        to_move = v[enc.VECTOR_OFFSET["to_move"] : enc.VECTOR_OFFSET["to_move"] + 4]
        assert list(to_move) == [1 if k == (0 - seat) % 4 else 0 for k in range(4)]
        known = enc.VECTOR_OFFSET["seat_0"] + enc.SEAT_OFFSET["supply_known"]
        assert v[known] == 1
        at = enc.SEAT_OFFSET["supply_known"]
        others = [enc.VECTOR_OFFSET[f"seat_{k}"] + at for k in (1, 2, 3)]
        assert list(v[others]) == [0, 0, 0]  # other supplies stay hidden


def test_the_small_board_leaves_the_margin_off_the_board() -> None:
    s = new_game("medina-v2", 2, 5)
    assert get_ruleset("medina-v2", 2).geometry.cols == 16
    planes = enc.encode_planes(observation_to_proto(observe(s, 1)))
    assert planes[:, 12, :].sum() == 0 and planes[:, :, 16:].sum() == 0
    assert planes[enc.PLANE_INDEX["on_board"]].sum() == 16 * 12
    assert planes[enc.PLANE_INDEX["tower"], 11, 15] == 1


def _case_ids() -> list[Any]:
    out = []
    for path in FIXTURES:
        for i, case in enumerate(json.loads(path.read_text())["cases"]):
            out.append(pytest.param(path.name, i, id=f"{path.stem}:{case['name']}"))
    return out


@pytest.mark.parametrize(("name", "number"), _case_ids())
def test_the_fixtures_encode_as_they_say(name: str, number: int) -> None:
    data = json.loads((FIXTURES[0].parent / name).read_text())
    assert data["encoding_version"] == enc.ENCODING_VERSION
    case = data["cases"][number]
    obs = json_format.ParseDict(case["observation"], game_pb2.Observation())
    legal = (
        json_format.ParseDict(case["legal"], game_pb2.LegalActions())
        if case["legal"] is not None
        else None
    )
    got = enc.encode(obs, legal)
    expected = case["expected"]
    planes = np.zeros((enc.PLANE_COUNT, enc.ROWS, enc.COLS), dtype=np.uint8)
    for p, r, c in expected["planes"]:
        planes[p, r, c] = 1
    vector = np.zeros(enc.VECTOR_SIZE, dtype=np.float32)
    for i, value in expected["vector"]:
        vector[i] = value
    mask = np.zeros(enc.ACTION_COUNT, dtype=np.int8)
    mask[expected["mask"]] = 1
    np.testing.assert_array_equal(got.planes, planes)
    np.testing.assert_array_equal(got.vector, vector)
    np.testing.assert_array_equal(got.mask, mask)
    if legal is not None:  # the mask is the legal list, one index per listed action
        assert int(mask.sum()) == sum(len(g.squares) for g in legal.placements) + legal.tea


def test_every_configuration_has_fixtures() -> None:
    assert [p.name for p in FIXTURES] == sorted(
        f"{r}-{n}p.json"
        for r, n in [
            ("medina-v2", 2),
            ("medina-v2", 3),
            ("medina-v2", 4),
            ("medina-v1", 3),
            ("medina-v1", 4),
            ("medina-v1-2p", 2),
        ]
    )


def test_the_fixtures_are_what_the_script_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "encoding_fixtures.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def _doc_table(heading: str) -> list[str]:
    """The first column (a `name`) of the table under ``heading`` in docs/encoding.md."""
    section = DOC.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \d+(?:\.\.\d+)? \| `([a-z_0-9]+)` \|", section, flags=re.M)


def test_the_doc_lists_every_plane_and_field_in_order() -> None:
    assert _doc_table("Planes") == [name for name, _ in enc.PLANES]
    assert _doc_table("Vector") == [name for name, _, _ in enc.VECTOR_FIELDS]
    assert _doc_table("Seat slot") == [name for name, _, _ in enc.SEAT_FIELDS]
    assert _doc_table("Actions") == [
        f"{kind.name.lower()}{'_' + ('grey', 'purple', 'brown', 'orange')[c] if c >= 0 else ''}"
        for kind, c in enc.ACTION_SLOTS
    ] + ["tea"]
