"""The examples of docs/envs.md run as printed (the PettingZoo, Gymnasium and OpenSpiel
ones; the arena's needs a server and a token)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "envs.md").read_text(), re.S)
IN_PROCESS = [b for b in BLOCKS if "await " not in b]


def test_the_doc_has_its_three_environment_examples() -> None:
    assert len(IN_PROCESS) == 3, "docs/envs.md: the PettingZoo, Gymnasium, OpenSpiel examples"


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("block", IN_PROCESS, ids=["pettingzoo", "gymnasium", "openspiel"])
def test_an_example_of_the_doc_runs_as_printed(block: str) -> None:
    names: dict[str, object] = {}
    exec(compile(block, "docs/envs.md", "exec"), names)  # the doc's own code
    if "gymnasium.make" in block:  # the mask the doc shows, read the way that works
        legal = names["legal"]
        assert isinstance(legal, np.ndarray) and legal.dtype == bool and legal.any()
