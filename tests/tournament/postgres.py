"""A throwaway PostgreSQL server for the tests: Debian's ``postgresql`` package (installed
when missing; the tests run as root), a cluster in a temporary directory, listening on a unix
socket only (no TCP port at all), run as the ``postgres`` user because PostgreSQL refuses
root."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def apt_install(*packages: str) -> None:
    """Install Debian packages (update the lists first)."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, timeout=300, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=True, timeout=900, env=env)


def postgres_bin() -> Path:
    """The directory of initdb/pg_ctl, installing PostgreSQL when it is missing."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        apt_install("postgresql")
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed and could not be installed")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A running cluster; ``url(db)`` for a database in it, ``create_database`` to make one."""

    def __init__(self, root: Path, bindir: Path, port: int) -> None:
        self.root, self.bindir, self.port = root, bindir, port
        self.socket_dir = root / "sock"
        self._n = 0

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL over the unix socket."""
        return f"postgresql://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        self._n += 1
        name = f"t{self._n}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)

    def psql(self, sql: str) -> str:
        done = subprocess.run(
            [
                str(self.bindir / "psql"),
                "-h",
                str(self.socket_dir),
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-Atc",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """Start a cluster for the duration of the block; stopped and removed afterwards."""
    bindir = postgres_bin()
    user = pwd.getpwnam("postgres")
    root = Path(tempfile.mkdtemp(prefix="medina-pg-"))
    os.chmod(root, 0o755)
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    os.chown(root, user.pw_uid, user.pw_gid)
    os.chown(sock, user.pw_uid, user.pw_gid)
    port = _free_port()

    def as_postgres(*argv: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *argv],
            check=True,
            timeout=120,
            capture_output=True,
        )

    server = PostgresServer(root, bindir, port)
    try:
        as_postgres(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust")
        as_postgres(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-k {sock} -p {port} -c listen_addresses='' -c fsync=off",
            "start",
        )
        yield server
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)
