"""Write (or check) the encoding's conformance fixtures: tests/fixtures/encoding/*.json.

Each file holds, for one ruleset and player count, positions of a seeded random game as a
seat receives them — the protobuf ``Observation`` and, when the seat is to move, its
``LegalActions``, both in the protobuf JSON mapping with every field written out (as the
stdio bridge writes them) — and the tensors docs/encoding.md says they encode to, sparse:

    "planes": [[plane, row, col], ...]   the cells that are 1 (every other is 0)
    "vector": [[index, value], ...]      the entries that are not 0
    "mask":   [index, ...]               the actions that are 1

An implementation in another language parses the messages, builds its tensors and compares
them with these. The tensors here come from ``medina_client.encoding``; the messages from the
server's own conversion (``medina.wire``), exactly the bytes a bot is sent.

Usage: ``python tools/encoding_fixtures.py`` writes the files; ``--check`` only compares
them with what it would write and exits 1 when they differ (the test suite runs this).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf import json_format
from medina.engine import CONFIGURATIONS, GameState, apply_action, legal_moves, new_game, observe
from medina.wire.shared.legal import legal_to_proto
from medina.wire.shared.observation import observation_to_proto
from medina_client.encoding import ENCODING_VERSION, encode

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "encoding"
#: The game each file is cut from: seed of the setup and of the random moves.
SEED = 2025
#: Where in the game the positions are taken, as fractions of its decisions.
POINTS = (0.0, 0.5, 0.95)


def _json(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = json_format.MessageToDict(
        message, always_print_fields_with_no_presence=True
    )
    return data


def _case(name: str, s: GameState, viewer: int) -> dict[str, Any]:
    """One position seen by ``viewer`` (with its legal list when it is to move)."""
    obs = observation_to_proto(observe(s, viewer, since=s.n_events))
    legal = legal_to_proto(legal_moves(s)) if not s.over and s.to_move == viewer else None
    enc = encode(obs, legal)
    vector = [[int(i), float(enc.vector[i])] for i in np.flatnonzero(enc.vector)]
    return {
        "name": name,
        "observation": _json(obs),
        "legal": _json(legal) if legal is not None else None,
        "expected": {
            "planes": [[int(p), int(r), int(c)] for p, r, c in np.argwhere(enc.planes)],
            "vector": vector,
            "mask": [int(i) for i in np.flatnonzero(enc.mask)],
        },
    }


def fixture(ruleset: str, players: int) -> dict[str, Any]:
    """The fixture file of one configuration."""
    rng = random.Random(SEED)
    states = [new_game(ruleset, players, SEED)]
    while not states[-1].over:
        moves = legal_moves(states[-1])
        states.append(apply_action(states[-1], moves.nth(rng.randrange(len(moves)))))
    decisions = len(states) - 1
    cases = []
    for point in POINTS:
        k = int(point * decisions)
        s = states[k]
        cases.append(_case(f"decision {k}, the seat to move", s, s.to_move))
        other = (s.to_move + 1) % players
        cases.append(_case(f"decision {k}, seat {other} (not to move)", s, other))
    final = states[-1]
    cases.extend(_case(f"game over, seat {seat}", final, seat) for seat in (0, 1))
    return {
        "encoding_version": ENCODING_VERSION,
        "ruleset": ruleset,
        "players": players,
        "seed": SEED,
        "cases": cases,
    }


def _text(data: dict[str, Any]) -> str:
    """Compact JSON with one case per line (diffs stay readable, files small)."""
    head = {k: v for k, v in data.items() if k != "cases"}
    lines = [json.dumps(case, separators=(",", ":")) for case in data["cases"]]
    body = json.dumps(head, separators=(",", ":"))[:-1]
    return body + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"


def files() -> dict[Path, str]:
    """Every fixture file and its text."""
    return {
        OUT / f"{ruleset}-{players}p.json": _text(fixture(ruleset, players))
        for ruleset, players in CONFIGURATIONS
    }


def main(argv: list[str] | None = None) -> int:
    """Write the fixtures, or with ``--check`` report the ones that are out of date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a diff")
    args = parser.parse_args(argv)
    stale = []
    for path, text in files().items():
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.relative_to(ROOT))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        names = ", ".join(map(str, stale))
        print(f"out of date: {names} (run python tools/encoding_fixtures.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
