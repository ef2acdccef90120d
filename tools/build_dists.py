"""Build the four distributions into ``dist/`` (``make dist``): wheel and sdist of each.

    medina-engine    medina.engine,            the rules and the reference strategies;
                     medina.strategies         standard library only
    medina-protocol  medina.v1 (+ the .proto)  generated messages and stubs;
                     medina.wire.shared        the conversions both sides use (wire/shared/)
    medina-client    medina_client, medina_envs  the bot SDK, example bots, stdio bridge; the
                                                learning environments (extra "envs")
    medina-arena     the rest of medina.*      referee, server, records, CLI, check-bot

Each is staged from the source tree into ``build/dists/<name>`` with its pyproject.toml
(and setup.py, for medina-client's compiled tensors) from ``packaging/<name>/`` and built
there with ``python -m build``; medina-client's wheel is therefore for this platform. The
protocol's code is generated while staging (tools/genproto.py), so it is built, never
committed. ``medina`` is a namespace package shared by three of them: no distribution ships
``medina/__init__.py``.

Usage: ``python tools/build_dists.py [OUT_DIR]`` (default: dist).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from genproto import generate  # noqa: E402

#: Distribution -> folders of its packages that another distribution ships.
SHIPPED_ELSEWHERE: dict[str, list[str]] = {"medina-arena": ["medina/wire/shared"]}

#: Distribution -> the packages it holds, as (source directory, path inside the dist).
CONTENTS: dict[str, list[tuple[Path, str]]] = {
    "medina-engine": [
        (ROOT / "server/medina/engine", "medina/engine"),
        (ROOT / "server/medina/strategies", "medina/strategies"),
    ],
    "medina-protocol": [  # and medina.v1, generated
        (ROOT / "server/medina/wire/shared", "medina/wire/shared"),
    ],
    "medina-client": [
        (ROOT / "clients/python/medina_client", "medina_client"),
        (ROOT / "clients/python/medina_envs", "medina_envs"),
    ],
    "medina-arena": [
        (ROOT / "server/medina" / name, f"medina/{name}")
        for name in (
            "referee",
            "wire",
            "rpc",
            "records",
            "cli",
            "checkbot",
            "web",
            "launch",
            "sandbox",
            "tournament",
            "storage",
            "ladder",
            "boundary",
        )
    ],
}


def version() -> str:
    """The project's version (the root pyproject.toml): every distribution shares it."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return str(data["project"]["version"])


def stage(name: str, into: Path) -> Path:
    """Copy one distribution's files into ``into/name``; returns that directory."""
    where = into / name
    if where.exists():
        shutil.rmtree(where)
    (where / "src").mkdir(parents=True)
    template = (ROOT / "packaging" / name / "pyproject.toml").read_text()
    (where / "pyproject.toml").write_text(template.replace("@VERSION@", version()))
    (where / "README.md").write_text((ROOT / "packaging" / name / "README.md").read_text())
    if (ROOT / "packaging" / name / "setup.py").exists():  # compiled parts (medina-client)
        shutil.copy(ROOT / "packaging" / name / "setup.py", where / "setup.py")
    # Nothing built in the checkout ships: the distribution compiles its own.
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", ".stamp-*")
    for source, target in CONTENTS[name]:
        shutil.copytree(source, where / "src" / target, ignore=ignore)
        (where / "src" / target / "py.typed").write_text("")
    for folder in SHIPPED_ELSEWHERE.get(name, []):
        shutil.rmtree(where / "src" / folder)
    if name == "medina-protocol":
        generate(where / "src")
        protos = where / "src/medina/v1/proto/medina/v1"
        protos.mkdir(parents=True)
        for proto in sorted((ROOT / "proto/medina/v1").glob("*.proto")):
            shutil.copy(proto, protos / proto.name)
    return where


def build(out: Path) -> list[Path]:
    """Stage and build every distribution; returns the files written to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    staging = ROOT / "build" / "dists"
    for name in CONTENTS:
        where = stage(name, staging)
        subprocess.run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(where)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return sorted(p for p in out.iterdir() if p.suffix in (".whl", ".gz"))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"
    for path in build(target):
        print(f"built {path.relative_to(target.parent) if target.is_absolute() else path}")
