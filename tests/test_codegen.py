"""proto/ generates code that compiles in other languages, with local protoc plugins from the
package registries (Debian's protoc-gen-go and protoc-gen-go-grpc with the Go compiler and
Debian's Go protobuf and gRPC libraries; npm's ts-proto with TypeScript), through `buf
generate` in managed mode: the .proto files need no language options."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUF = ROOT / "tools" / ".buf" / "node_modules" / ".bin" / "buf"
CODEGEN = ROOT / "tools" / "codegen"
GO_IMPORT = "example.com/medina/gen/go"
pytestmark = pytest.mark.timeout(600)


def ensure_go_tools() -> None:
    """Debian's Go compiler, plugins and libraries, installed when missing (we are root)."""
    needed = {
        "go": "golang-go",
        "protoc-gen-go": "protoc-gen-go",
        "protoc-gen-go-grpc": "protoc-gen-go-grpc",
    }
    libraries = Path("/usr/share/gocode/src/google.golang.org")
    packages = [pkg for tool, pkg in needed.items() if shutil.which(tool) is None]
    if not (libraries / "grpc").exists() or not (libraries / "protobuf").exists():
        packages += ["golang-google-grpc-dev", "golang-google-protobuf-dev"]
    if packages:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, timeout=300, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", *packages], check=True, timeout=600, env=env
        )


def generate(tmp: Path, plugins: str) -> None:
    if not BUF.exists():
        subprocess.run(["bash", str(ROOT / "tools" / "buflint.sh")], check=True, timeout=300)
    template = tmp / "buf.gen.yaml"
    template.write_text(
        "version: v2\n"
        "managed:\n"
        "  enabled: true\n"
        "  override:\n"
        "    - file_option: go_package_prefix\n"
        f"      value: {GO_IMPORT}\n"
        "plugins:\n" + plugins
    )
    done = subprocess.run(
        [str(BUF), "generate", str(ROOT / "proto"), "--template", str(template), "-o", str(tmp)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_go_code_generates_and_compiles(tmp_path: Path) -> None:
    ensure_go_tools()
    src = tmp_path / "gopath" / "src"
    generate(
        tmp_path,
        "  - local: protoc-gen-go\n"
        f"    out: gopath/src/{GO_IMPORT}\n"
        "    opt: paths=source_relative\n"
        "  - local: protoc-gen-go-grpc\n"
        f"    out: gopath/src/{GO_IMPORT}\n"
        "    opt: paths=source_relative\n",
    )
    package = src / GO_IMPORT / "medina" / "v1"
    assert (package / "arena.pb.go").exists() and (package / "arena_grpc.pb.go").exists()
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": f"{tmp_path / 'gopath'}:/usr/share/gocode",
        "GOCACHE": str(tmp_path / "gocache"),
        "GOFLAGS": "",
    }
    built = subprocess.run(
        ["go", "vet", f"{GO_IMPORT}/medina/v1"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert built.returncode == 0, built.stdout + built.stderr


def test_typescript_code_generates_and_type_checks(tmp_path: Path) -> None:
    if not (CODEGEN / "node_modules" / ".bin" / "tsc").exists():
        subprocess.run(["npm", "ci", "--silent", "--no-audit", "--no-fund"], cwd=CODEGEN,
                       check=True, timeout=600)  # fmt: skip
    plugin = CODEGEN / "node_modules" / ".bin" / "protoc-gen-ts_proto"
    generate(
        tmp_path,
        f"  - local: {plugin}\n    out: ts\n    opt: esModuleInterop=true,outputServices=grpc-js\n",
    )
    files = sorted(str(p) for p in (tmp_path / "ts").rglob("*.ts"))
    assert any(f.endswith("medina/v1/arena.ts") for f in files)
    (tmp_path / "node_modules").symlink_to(CODEGEN / "node_modules")
    checked = subprocess.run(
        [str(CODEGEN / "node_modules" / ".bin" / "tsc"), "--noEmit", "--strict",
         "--target", "es2020", "--module", "commonjs", "--moduleResolution", "node",
         "--skipLibCheck", *files],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
