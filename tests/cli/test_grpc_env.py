"""medina-arena's processes give gRPC its options before gRPC first reads them (on import)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata

import pytest
from medina.cli import grpc_env

#: Run in a fresh interpreter: note GRPC_EXPERIMENTS at the moment ``grpc`` is first
#: imported, then import the CLI as ``medina-arena`` and ``python -m medina.cli`` do.
PROBE = """
import os, sys
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "grpc" and not seen:
            seen.append(os.environ.get(sys.argv[1], "<absent>"))
        return None
sys.meta_path.insert(0, Watch())
import medina.cli
assert "grpc" in sys.modules, "the CLI no longer imports grpc: the probe sees nothing"
print(seen[0])
"""


def at_grpc_import(env: dict[str, str], name: str = "GRPC_EXPERIMENTS") -> str:
    """The variable ``name`` as ``grpc`` saw it when a fresh ``import medina.cli`` imported
    it."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, name], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def clean_env() -> dict[str, str]:
    names = ("GRPC_EXPERIMENTS", "GRPC_ENABLE_FORK_SUPPORT")
    return {k: v for k, v in os.environ.items() if k not in names}


@pytest.mark.skipif(
    ".".join(metadata.version("grpcio").split(".")[:2]) not in grpc_env.MEASURED_RELEASES,
    reason="grpcio is a release the option was not measured with: it is left unset",
)
def test_grpc_meets_the_option_when_it_is_first_imported() -> None:
    assert at_grpc_import(clean_env()) == grpc_env.EXPERIMENTS


def test_an_operators_own_experiments_are_kept_even_empty() -> None:
    assert at_grpc_import({**clean_env(), "GRPC_EXPERIMENTS": "-foo"}) == "-foo"
    assert at_grpc_import({**clean_env(), "GRPC_EXPERIMENTS": ""}) == ""


def test_other_grpcio_releases_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRPC_EXPERIMENTS", raising=False)
    monkeypatch.setattr(metadata, "version", lambda _name: "1.99.0")
    assert grpc_env.apply() is False
    assert "GRPC_EXPERIMENTS" not in os.environ
    monkeypatch.setattr(metadata, "version", lambda _name: "1.85.7")
    assert grpc_env.apply() is True
    assert os.environ["GRPC_EXPERIMENTS"] == grpc_env.EXPERIMENTS


def test_grpc_runs_no_fork_handlers_unless_the_operator_says_otherwise() -> None:
    assert at_grpc_import(clean_env(), "GRPC_ENABLE_FORK_SUPPORT") == "false"
    kept = {**clean_env(), "GRPC_ENABLE_FORK_SUPPORT": "true"}
    assert at_grpc_import(kept, "GRPC_ENABLE_FORK_SUPPORT") == "true"
    kept = {**clean_env(), "GRPC_ENABLE_FORK_SUPPORT": ""}
    assert at_grpc_import(kept, "GRPC_ENABLE_FORK_SUPPORT") == ""
