"""`pip wheel .` in a fresh copy of the checkout, with a fresh virtualenv, builds
`medina-arena-dev` as README.md promises: pip's isolated build environment brings the build
requirements from the package index (grpcio-tools, mypy-protobuf), and the protobuf code and
its type stubs are generated while the wheel builds. The wheel then installs and runs."""

from __future__ import annotations

import shutil
import subprocess
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(600)


def copy_checkout(into: Path) -> None:
    """The files a clone of the working tree would hold: tracked and new files that git does
    not ignore (so no .venv, no generated code, no build output), as they are on disk now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, timeout=60,
    )  # fmt: skip
    if listed.returncode != 0:
        pytest.skip("not a git checkout: no clean copy to build from")
    for name in listed.stdout.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file():  # a tracked file deleted in the work tree is not copied
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def test_pip_wheel_builds_the_dev_wheel_in_a_fresh_clone(tmp_path: Path) -> None:
    source, wheels = tmp_path / "src", tmp_path / "wheels"
    copy_checkout(source)
    assert not (source / "server" / "medina" / "v1").exists()
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--wheel-dir", str(wheels), "."],
        cwd=source, capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    [wheel] = wheels.glob("*.whl")
    # The environments' tensors are compiled into it: a wheel for this platform.
    assert wheel.name.startswith("medina_arena_dev-0.1.0-cp3"), wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(n.startswith("medina_envs/_tensors.") and n.endswith(".so") for n in names)
    protos = [p.stem for p in (ROOT / "proto" / "medina" / "v1").glob("*.proto")]
    for proto in protos:
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi"):
            assert f"medina/v1/{proto}{suffix}" in names
    others = {"medina/v1/py.typed", "medina_client/bots/__init__.py", "medina/web/static/board.js"}
    assert others <= names

    installed = subprocess.run(
        [*pip, "install", "-q", str(wheel)], capture_output=True, text=True, timeout=500
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    imports = subprocess.run(
        [str(python), "-c",
         "import medina.v1.arena_pb2 as a, medina_client, medina.rpc.single.server\n"
         "print(a.Hello(token='t').token)"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert imports.stdout.strip() == "t", imports.stderr
    arena = tmp_path / "venv" / "bin" / "medina-arena"
    helped = subprocess.run([str(arena), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "serve" in helped.stdout, helped.stderr
