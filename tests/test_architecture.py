"""The layers' import arrows (ARCHITECTURE.md): the engine is pure standard library, and
no layer reaches up."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server" / "medina"
CLIENT = ROOT / "clients" / "python" / "medina_client"


def module_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "v1" not in p.relative_to(SERVER.parent).parts)


def _module_name(path: Path, top: Path) -> str:
    return ".".join(path.relative_to(top).with_suffix("").parts)


def test_engine_imports_only_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    bad = []
    for path in module_files(SERVER / "engine"):
        for name in _absolute_imports(path, ROOT / "server"):
            top = name.split(".")[0]
            if name.startswith("medina.engine") or top in allowed:
                continue
            bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "the engine must use only the standard library:\n" + "\n".join(bad)


def _absolute_imports(path: Path, top: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path, top).rsplit(".", 1)[0]
    if path.name == "__init__.py":
        package = _module_name(path, top).removesuffix(".__init__")
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return found


# Each layer and the medina packages it must never import.
FORBIDDEN = {
    "engine": (
        "medina.referee",
        "medina.rpc",
        "medina.v1",
        "medina.wire",
        "medina.records",
        "medina.cli",
        "medina.tournament",
        "medina.storage",
        "grpc",
        "google",
    ),
    "referee": (
        "medina.rpc",
        "medina.v1",
        "medina.wire",
        "medina.records",
        "medina.cli",
        "medina.tournament",
        "medina.storage",
        "medina.web",
        "medina_client",
        "grpc",
        "google",
        "socket",
        "asyncio.streams",
    ),
    "wire": (
        "medina.rpc",
        "medina.records",
        "medina.cli",
        "medina.tournament",
        "medina.web",
        "grpc",
    ),
    "records": ("medina.rpc", "medina.cli", "medina.web", "grpc"),
    "rpc": ("medina.cli", "medina.tournament", "medina.storage", "medina.web"),
    # Launching bot processes: no server, no protocol.
    "launch": ("medina.cli", "medina.rpc", "medina.referee", "medina.tournament", "grpc"),
    # The sandbox knows bubblewrap, the kernel's limits and sockets: nothing of games,
    # servers or tournaments (launch uses it, not the other way round).
    "sandbox": (
        "medina.cli",
        "medina.rpc",
        "medina.referee",
        "medina.tournament",
        "medina.storage",
        "medina.web",
        "medina.launch",
        "medina.engine",
        "medina.wire",
        "medina.records",
        "medina.checkbot",
        "medina.v1",
        "medina_client",
        "grpc",
        "google",
    ),
    # Storage is tables and queries: it knows no game, no server, no tournament logic.
    "storage": (
        "medina.cli",
        "medina.rpc",
        "medina.referee",
        "medina.tournament",
        "medina.wire",
        "medina.engine",
        "medina.web",
        "grpc",
    ),
    # Tournaments drive servers over gRPC like any organiser; the CLI drives them.
    "tournament": ("medina.cli", "medina_client", "medina.web"),
    # The viewer reads the arena (rpc), records, the referee's and engine's data, and a
    # tournament's standings; it never drives the CLI, check-bot or the SDK.
    "web": ("medina.cli", "medina.checkbot", "medina_client"),
    # check-bot drives the real server and referee; the CLI hands it a bot launcher. Of the
    # SDK it uses only the example strategies, for its in-process opponents.
    "checkbot": (
        "medina.cli",
        "medina.web",
        "grpc",
        *(f"medina_client.{m}" for m in ("bot", "connection", "runner", "stdio", "bots")),
    ),
}


def test_layers_do_not_reach_up() -> None:
    bad = []
    for layer, forbidden in FORBIDDEN.items():
        folder = SERVER / layer
        if not folder.exists():
            continue
        for path in module_files(folder):
            for name in _absolute_imports(path, ROOT / "server"):
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    bad.append(f"{path.relative_to(ROOT)} ({layer}) imports {name}")
    assert not bad, "\n".join(bad)


def test_only_the_cli_imports_the_web_viewer() -> None:
    bad = []
    for path in module_files(SERVER):
        parts = path.relative_to(SERVER).parts
        if parts[0] in ("web", "cli"):
            continue
        for name in _absolute_imports(path, ROOT / "server"):
            if name == "medina.web" or name.startswith("medina.web."):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "only medina.cli may import medina.web:\n" + "\n".join(bad)
    # The checker sees the CLI's import, so it could fail.
    assert "medina.web" in _absolute_imports(SERVER / "cli" / "web_cmd.py", ROOT / "server")


def test_client_never_imports_the_server_side() -> None:
    if not CLIENT.exists():
        return
    bad = []
    for path in sorted(CLIENT.rglob("*.py")):
        for name in _absolute_imports(path, ROOT / "clients" / "python"):
            if name.startswith(
                ("medina.referee", "medina.rpc", "medina.tournament", "medina.cli", "medina.web")
            ):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_sandbox_relay_imports_only_the_standard_library() -> None:
    # It runs inside the sandbox as `python -I -S -c SOURCE`: no site-packages, no medina.
    relay = SERVER / "sandbox" / "relay.py"
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    bad = [n for n in _absolute_imports(relay, ROOT / "server") if n.split(".")[0] not in allowed]
    assert not bad, f"sandbox/relay.py imports {bad}"


#: Packages at the top of the tree: they are driven by nobody inside medina.
TOP = {"cli"}


def test_every_package_is_guarded_and_documented() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    packages = sorted(p.parent.name for p in SERVER.glob("*/__init__.py") if p.parent.name != "v1")
    unguarded = [p for p in packages if p not in FORBIDDEN and p not in TOP]
    assert not unguarded, f"packages with no import rule here: {unguarded}"
    undocumented = [p for p in packages if f"{p}/" not in doc]
    assert not undocumented, f"packages docs/architecture.md does not name: {undocumented}"


def test_the_checker_sees_relative_imports() -> None:
    # Guard against a checker that cannot fail: a known engine file must show its imports.
    names = _absolute_imports(SERVER / "engine" / "turn.py", ROOT / "server")
    assert "medina.engine.movegen" in names
    assert "medina.engine.rules.walls" in names


#: The SDK modules that play in process (selfplay, check-bot, the strength bench): engine only.
STRATEGY_MODULES = ("strategies.py", "heuristics.py", "search.py")


def test_strategy_modules_import_only_the_engine() -> None:
    bad = []
    for name in STRATEGY_MODULES:
        path = CLIENT / name
        for imported in _absolute_imports(path, ROOT / "clients" / "python"):
            top = imported.split(".")[0]
            ok = (
                imported.startswith(("medina.engine", "medina_client.strategies"))
                or imported in ("medina_client.heuristics", "medina_client.search")
                or top in sys.stdlib_module_names
            )
            if not ok:
                bad.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert not bad, "\n".join(bad)
