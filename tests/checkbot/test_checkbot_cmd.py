"""``medina-arena check-bot`` without bots: a seed the position search cannot serve is a usage
error naming the way out, and the temporary directory does not stay behind."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from medina.checkbot import PositionNotFoundError
from medina.cli import checkbot_cmd, main


def test_an_unservable_seed_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made: list[Path] = []

    def mkdtemp(prefix: str) -> str:
        path = tmp_path / f"{prefix}x"
        path.mkdir()
        made.append(path)
        return str(path)

    async def no_position(*_args: Any, **_kwargs: Any) -> list[Any]:
        raise PositionNotFoundError("no only-WALL position in 300 medina-v2 2-player games")

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(checkbot_cmd, "_check", no_position)
    assert main(["check-bot", "--seed", "99", "--", "bot"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "medina-arena check-bot: no only-WALL position in 300 medina-v2 2-player games; "
        "try another --seed\n"
    )
    assert made and not made[0].exists()
