"""The quick-start in docs/bot-authors.md works as printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from medina.records.reader import read_record
from medina.records.verify import verify_record

ROOT = Path(__file__).resolve().parents[2]


def test_the_python_quick_start_plays_a_match(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "bot-authors.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/bot-authors.md has no python example"
    (tmp_path / "my_bot.py").write_text(blocks[0])
    done = subprocess.run(
        [sys.executable, "-m", "medina.cli", "match", "--players", "2",
         "--bot", "python my_bot.py", "--bot", "python -m medina_client --bot random",
         "--records", str(tmp_path / "records"), "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wall-builder" in done.stdout
    record = read_record(done.stdout.rsplit("record: ", 1)[1].strip())
    assert verify_record(record).ok
