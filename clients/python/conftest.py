"""pytest collects the SDK's package docstring as a doctest (pyproject's ``testpaths`` names
``medina_client/__init__.py``), so the example a bot author reads first always runs.

Only that file: ``--doctest-modules`` for the whole tree would import every helper script
under tests/ (bots that misbehave on purpose)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

#: The modules whose ``>>>`` examples pytest runs.
DOCTESTED = (Path(__file__).parent / "medina_client" / "__init__.py",)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path in DOCTESTED:
        doctests: pytest.Collector = DoctestModule.from_parent(parent, path=file_path)
        return doctests
    return None
