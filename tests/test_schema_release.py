"""`buf breaking` guards protocol 1.0: the released image is committed, and a change that
would break a bot built against it is caught (make lint runs the check on proto/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUF = ROOT / "tools" / ".buf" / "node_modules" / ".bin" / "buf"
RELEASE = ROOT / "proto" / "releases" / "medina-v1.binpb"


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    if not BUF.exists():
        subprocess.run(["bash", str(ROOT / "tools" / "buflint.sh")], check=True, timeout=300)
    copy = tmp_path / "proto"
    shutil.copytree(ROOT / "proto", copy, ignore=shutil.ignore_patterns("releases"))
    return copy


def breaking(proto: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BUF), "breaking", str(proto), "--against", str(RELEASE)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_current_schema_keeps_the_release(schema: Path) -> None:
    assert RELEASE.stat().st_size > 10_000
    result = breaking(schema)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_renumbered_field_is_caught(schema: Path) -> None:
    arena = schema / "medina" / "v1" / "arena.proto"
    text = arena.read_text()
    assert "uint32 request_id = 1;" in text
    arena.write_text(text.replace("uint32 request_id = 1;", "uint32 request_id = 9;", 1))
    result = breaking(schema)
    assert result.returncode != 0
    assert "request_id" in result.stdout + result.stderr
