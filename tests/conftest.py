"""Fixtures shared by the test packages: a real PostgreSQL for the session, and store URLs of
both kinds (the tournament and ladder stores)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tournament.postgres import PostgresServer, postgres_server


@pytest.fixture(scope="session")
def pg() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster (Debian's package, installed when missing)."""
    with postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database: an SQLite file, and a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "t.db")
    server: PostgresServer = request.getfixturevalue("pg")
    return server.create_database()


@pytest.fixture
def pg_url(pg: PostgresServer) -> str:
    """A fresh empty PostgreSQL database."""
    return pg.create_database()
