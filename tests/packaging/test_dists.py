"""The distributions `make dist` builds, installed as their users would: a server in a clean
virtualenv holding the dependency floors exactly, and a bot author's virtualenv with the SDK
alone. Packages come from the package index (the pip cache keeps this quick)."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from build_dists import build  # type: ignore[import-not-found]  # noqa: E402

#: The true floors: the generated code refuses anything older (see packaging/*/pyproject.toml).
FLOORS = [
    "grpcio==1.85.1",
    "protobuf==7.35.1",
    "grpcio-health-checking==1.85.1",
    "grpcio-reflection==1.85.1",
    "googleapis-common-protos==1.76.0",
    "starlette==0.40.0",
    "uvicorn==0.30.0",
    "prometheus-client==0.20.0",
    "openskill==6.0.0",
    "rich==13.7.0",
    "sqlalchemy==2.0.30",
    "psycopg[binary]==3.2.1",
]
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = build(out)
    assert {p.name for p in built} >= {
        f"medina_{n}-0.1.0-py3-none-any.whl" for n in ("engine", "protocol", "arena")
    }
    # The client compiles the environments' tensors: its wheel is for this platform.
    [client] = [p for p in built if p.name.startswith("medina_client-0.1.0-cp3")]
    names = zipfile.ZipFile(client).namelist()
    assert any(n.startswith("medina_envs/_tensors.") and n.endswith(".so") for n in names)
    assert "medina_envs/_tensors.pyi" in names and not any(".stamp-" in n for n in names)
    assert len([p for p in built if p.name.endswith(".tar.gz")]) == 4
    return out


def make_venv(where: Path, *packages: str) -> Path:
    venv.create(where, with_pip=True)
    python = where / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, *packages], check=True, timeout=500)
    return python


def run(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.fixture(scope="module")
def server_python(dists: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    where = tmp_path_factory.mktemp("server-venv")
    make_venv(where, *FLOORS)
    # The server alone: medina-arena brings medina-engine and medina-protocol, not the SDK.
    python = make_venv(where, "--find-links", str(dists), "medina-arena")
    yield python


def test_the_server_installs_at_the_floors_and_plays_a_match(
    dists: Path, server_python: Path, tmp_path: Path
) -> None:
    versions = run(
        server_python,
        "-c",
        "import grpc, google.protobuf as p; print(grpc.__version__, p.__version__)",
    )
    assert versions.stdout.split() == ["1.85.1", "7.35.1"]  # the floors, not something newer
    imports = run(
        server_python,
        "-c",
        "import pkgutil, medina, importlib, importlib.util as u\n"
        "for m in pkgutil.walk_packages(medina.__path__, 'medina.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "from medina.strategies import POLICIES\n"
        "print(u.find_spec('medina_client') is None, len(POLICIES) > 5)",
        cwd=tmp_path,
    )
    assert imports.stdout.split() == ["True", "True"], imports.stderr
    arena = server_python.parent / "medina-arena"
    # in-process play needs only the reference strategies (medina-engine)
    selfplay = subprocess.run(
        [str(arena), "selfplay", "--ruleset", "medina-v2", "--players", "2", "--games", "1",
         "--bots", "greedy,random", "--seed", "3", "--out", str(tmp_path / "self")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert selfplay.returncode == 0, selfplay.stdout + selfplay.stderr
    # house bots are the SDK's program: refused with the extra to install, before any start
    house = subprocess.run(
        [str(arena), "ladder", "serve", "--db", str(tmp_path / "l.db"), "--port", "0",
         "--house", "greedy"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert house.returncode == 2 and "medina-arena[house]" in house.stderr, house.stderr
    assert not (tmp_path / "l.db").exists()
    extra = subprocess.run(
        [str(server_python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--find-links", str(dists), "medina-arena[house]"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert extra.returncode == 0, extra.stderr
    assert (
        run(server_python, "-c", "import medina_client.stdio, medina_client.bots").returncode == 0
    )
    # the tournament's storage and ratings at their floors: a store on SQLite, a rated game
    ratings = run(
        server_python,
        "-c",
        "from medina.storage.tournaments import NewGame, SeatRow, TournamentStore\n"
        "from medina.tournament.runner import standings\n"
        "s = TournamentStore('t.db')\n"
        "row, _ = s.ensure_tournament('t', 'd', '{}', [('a', ['x'], None, []),"
        " ('b', ['x'], None, [])], [NewGame(0, 0, 'medina-v1-2p', 2, 1, 0, ('a', 'b'))])\n"
        "c = s.claim('w', 60, row.id)\n"
        "assert c is not None\n"
        "s.finish(c, match_id='m', record_path='', ending='complete', seats=["
        "SeatRow(0, 'a', 9, 1, 'normal', 0, ''), SeatRow(1, 'b', 3, 2, 'normal', 0, '')])\n"
        "st = standings(s, row.id)\n"
        "print([r.bot for r in st.rows], st.rows[0].mu > st.rows[1].mu)",
        cwd=tmp_path,
    )
    assert ratings.stdout.strip() == "['a', 'b'] True", ratings.stderr
    bot = f"{server_python} -m medina_client --bot random"
    match = subprocess.run(
        [str(arena), "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "4",
         "--records", str(tmp_path / "records"), "--bot", bot, "--bot", bot],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert match.returncode == 0, match.stdout + match.stderr
    [record] = (tmp_path / "records").glob("*.jsonl")
    verify = subprocess.run(
        [str(arena), "replay", "verify", str(record)], capture_output=True, text=True, timeout=60
    )
    assert verify.returncode == 0 and "OK" in verify.stdout, verify.stdout + verify.stderr


def test_a_bot_author_gets_the_sdk_and_nothing_of_the_server(dists: Path, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", "--find-links", str(dists), "medina-client")
    check = run(
        python,
        "-c",
        "import importlib.util as u\n"
        "import medina_client, medina.engine, medina.v1.arena_pb2, medina.wire.shared.client\n"
        "gone = [m for m in ('medina.rpc', 'medina.referee', 'medina.cli', 'medina.wire.play',"
        " 'medina.wire.convert', 'grpc_health', 'grpc_reflection')"
        " if u.find_spec(m.split('.')[0]) and u.find_spec(m)]\n"
        "print(gone)",
        cwd=tmp_path,
    )
    assert check.stdout.strip() == "[]", check.stderr
    assert not (tmp_path / "venv" / "bin" / "medina-arena").exists()
    helped = run(python, "-m", "medina_client", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "--server" in helped.stdout
    protos = run(
        python,
        "-c",
        "import medina.v1, pathlib; print(sorted(p.name for p in "
        "pathlib.Path(medina.v1.__file__).parent.joinpath('proto/medina/v1').iterdir()))",
        cwd=tmp_path,
    )
    assert "arena.proto" in protos.stdout and "common.proto" in protos.stdout


ENVS_CHECK = """
import numpy as np, pyspiel, gymnasium
import medina_envs, medina_envs.spiel
from pettingzoo.test.api_test import api_test
api_test(medina_envs.aec_env("medina-v2", 2), num_cycles=20)
env = gymnasium.make(medina_envs.ENV_ID, players=2)
obs, _ = env.reset(seed=1)
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
state = medina_envs.spiel.load("medina-v1", 3).new_initial_state()
state.apply_action(state.legal_actions()[0])
from medina_envs.examples.linear_policy import policy
print("envs", policy(obs))
import medina_envs.tensors
assert medina_envs.tensors.COMPILED
"""


def test_the_envs_extra_brings_the_environment_apis(dists: Path, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", "--find-links", str(dists), "medina-client[envs]")
    check = run(python, "-c", ENVS_CHECK, cwd=tmp_path)
    assert check.returncode == 0, check.stderr[-3000:]
    assert check.stdout.splitlines()[-1].startswith("envs "), check.stdout
    server = run(python, "-c", "import medina.rpc", cwd=tmp_path)
    assert server.returncode != 0  # the extra brings no server
