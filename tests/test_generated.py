"""Generated protobuf code is built from proto/, never edited: the build output must be fresh."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "server" / "medina" / "v1"


def test_generated_code_matches_the_protos(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "genproto.py"), str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    fresh = {p.name: p.read_bytes() for p in (tmp_path / "medina" / "v1").iterdir() if p.is_file()}
    built = {
        p.name: p.read_bytes() for p in GENERATED.iterdir() if p.is_file() and p.name[0] != "."
    }
    assert sorted(fresh) == sorted(built), "generated file set differs: run `make proto`"
    stale = [name for name in fresh if fresh[name] != built[name]]
    assert not stale, f"stale generated code {stale}: run `make proto` (never edit it by hand)"


def test_generated_code_is_not_committed() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "server/medina/v1"], cwd=ROOT, capture_output=True, text=True
    )
    if tracked.returncode != 0:  # not a git checkout (e.g. an sdist): nothing to check
        return
    assert tracked.stdout.strip() == "", "generated code must not be committed"
