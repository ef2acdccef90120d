"""The layers' import arrows (ARCHITECTURE.md): the engine is pure standard library, and
no layer reaches up."""

from __future__ import annotations

import ast
import subprocess
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
STRATEGY_MODULES = ("strategies.py", "heuristics.py", "search.py", "champion.py")


def test_strategy_modules_import_only_the_engine() -> None:
    bad = []
    for name in STRATEGY_MODULES:
        path = CLIENT / name
        for imported in _absolute_imports(path, ROOT / "clients" / "python"):
            top = imported.split(".")[0]
            ok = (
                imported.startswith(("medina.engine", "medina_client.strategies"))
                or imported
                in ("medina_client.heuristics", "medina_client.search", "medina_client.champion")
                or top in sys.stdlib_module_names
            )
            if not ok:
                bad.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert not bad, "\n".join(bad)


ENVS = ROOT / "clients" / "python" / "medina_envs"
#: The SDK modules that need numpy (the encoding and the policy runner); the rest of the SDK
#: must stay installable without it.
NUMPY_MODULES = ("encoding.py", "policy.py")


def test_only_the_encoding_and_the_policy_runner_of_the_sdk_use_numpy() -> None:
    bad = []
    for path in sorted(CLIENT.rglob("*.py")):
        if path.name in NUMPY_MODULES:
            continue
        names = _absolute_imports(path, ROOT / "clients" / "python")
        heavy = sorted(n for n in names if n.split(".")[0] in ("numpy", "medina_envs"))
        if heavy:
            bad.append(f"{path.relative_to(ROOT)} imports {heavy}")
    assert not bad, "the SDK must import without numpy:\n" + "\n".join(bad)


def test_the_sdk_and_its_command_import_without_numpy() -> None:
    # numpy made unimportable: the SDK, its example bots and its command line still load.
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import medina_client, medina_client.__main__, medina_client.bots\n"
        "assert 'medina_client.policy' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_encoding_reads_only_the_messages_and_the_engine() -> None:
    path = CLIENT / "encoding.py"
    allowed = ("medina.v1", "medina.engine", "numpy")
    bad = [
        name
        for name in _absolute_imports(path, ROOT / "clients" / "python")
        if not name.startswith(allowed) and name.split(".")[0] not in sys.stdlib_module_names
    ]
    assert not bad, f"medina_client/encoding.py imports {bad}"


#: What the environments may never import: the server's match machinery (they run the engine
#: in process; ``medina.wire`` only builds the arena's own messages for the checks).
ENVS_FORBIDDEN = (
    "medina.referee",
    "medina.rpc",
    "medina.records",
    "medina.cli",
    "medina.tournament",
    "medina.storage",
    "medina.web",
    "medina.checkbot",
    "medina.launch",
)


def test_the_environments_sit_on_the_engine_and_the_sdk() -> None:
    bad = []
    for path in sorted(ENVS.rglob("*.py")):
        for name in _absolute_imports(path, ROOT / "clients" / "python"):
            if any(name == f or name.startswith(f + ".") for f in ENVS_FORBIDDEN):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)
    assert "medina_client.encoding" in _absolute_imports(
        ENVS / "observer.py", ROOT / "clients" / "python"
    )


def test_nothing_of_the_server_or_the_sdk_imports_the_environments() -> None:
    bad = []
    for top, root in ((SERVER, ROOT / "server"), (CLIENT, ROOT / "clients" / "python")):
        for path in sorted(top.rglob("*.py")):
            if "v1" in path.relative_to(top).parts:
                continue
            for name in _absolute_imports(path, root):
                if name.split(".")[0] == "medina_envs":
                    bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)
