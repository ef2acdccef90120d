"""How a server is configured: its address, records, credentials, limits and, for a worker
process of a multi-worker server, its own listener for bots. The single-process server and
the front of a multi-worker one read the same configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from medina.records.space import DEFAULT_RESERVE_MB

from .admission import AdmissionLimits
from .limits import Limits


@dataclass(frozen=True)
class BotListener:
    """A worker process's own address for bots (``serve --workers N``): bots that the front
    redirects play here, with no process forwarding their messages. It serves ArenaService
    and health only, with the front's TLS and per-client limits."""

    host: str
    port: int = 0
    limits: Limits = field(default_factory=Limits)
    tls_cert: bytes | None = None
    tls_key: bytes | None = None
    tls_client_ca: bytes | None = None


@dataclass(frozen=True)
class ServerConfig:
    """How to run the server. ``port`` 0 picks a free port."""

    host: str = "127.0.0.1"
    port: int = 50051
    records_dir: Path = Path("records")
    #: Free space (MB) kept where records go: below it CreateMatch is refused
    #: (``RECORD_UNWRITABLE``), so the matches in play can finish their records. 0: none.
    records_reserve_mb: float = DEFAULT_RESERVE_MB
    organiser_token: str | None = None
    tls_cert: bytes | None = None
    tls_key: bytes | None = None
    tls_client_ca: bytes | None = None  # set to require client certificates (mutual TLS)
    limits: Limits = field(default_factory=Limits)
    admission: AdmissionLimits = field(default_factory=AdmissionLimits)
    shutdown_grace_s: float = 30.0
    options: tuple[tuple[str, int], ...] = field(default=())
    #: Read the records directory at start (earlier runs' matches). A worker process of a
    #: multi-worker server does not: its front lists those, once.
    scan_records: bool = True
    #: A worker process's listener for bots (None: bots reach it through its front only).
    bots: BotListener | None = None

    def __post_init__(self) -> None:
        if not self.records_reserve_mb >= 0:
            raise ValueError(
                f"records reserve {self.records_reserve_mb} MB: must be 0 or more (0: none)"
            )
