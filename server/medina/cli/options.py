"""Command-line options shared by commands: match settings, TLS files, sandbox limits."""

from __future__ import annotations

import argparse
import ipaddress
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from medina.engine import RULESETS, EngineError, get_ruleset
from medina.records.space import DEFAULT_RESERVE_MB
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.errors import ConfigError
from medina.rpc.common.limits import Limits
from medina.sandbox import SandboxConfigError, SandboxError, SandboxLimits, check
from medina.sandbox.limits import BOUNDS
from medina.wire.shared.addresses import address_port_error, listening_port_error
from medina.wire.shared.tls import ClientTls, TlsFileError, check_ca, check_key_pair, client_tls

from .errors import CommandError

#: The options that name a TCP port to listen on, by their argparse ``dest``.
PORT_OPTIONS = {"port": "--port", "arena_port": "--arena-port", "http": "--http"}
#: The options that name a ``HOST:PORT`` to dial, by their argparse ``dest``.
ADDRESS_OPTIONS = {"server": "--server", "arena": "--arena", "arena_public": "--arena-public"}


def check_ports(args: argparse.Namespace) -> None:
    """CommandError for a port out of range, naming the option: a listening port out of
    0..65535 or an address's out of 1..65535. gRPC takes a larger one modulo 65536 and
    listens or dials elsewhere (``--port 70000`` listened on 4464)."""
    for dest, flag in PORT_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is not None and listening_port_error(value) is not None:
            raise CommandError(f"{flag} must be a port from 0 to 65535 (0: any free), got {value}")
    for dest, flag in ADDRESS_OPTIONS.items():
        address = getattr(args, dest, None)
        why = address_port_error(address) if isinstance(address, str) else None
        if why is not None:
            raise CommandError(f"{flag} {address}: {why}")


def add_match_options(p: argparse.ArgumentParser) -> None:
    """--ruleset, --players, --seed, --start-seat and the clock/policy options."""
    p.add_argument(
        "--ruleset", default="medina-v2", choices=RULESETS, help="rule set (default %(default)s)"
    )
    p.add_argument("--players", type=int, default=4, help="number of seats (default %(default)s)")
    p.add_argument(
        "--seed", type=int, default=1, help="seed of all setup randomness (default %(default)s)"
    )
    p.add_argument(
        "--start-seat",
        type=int,
        default=0,
        metavar="SEAT",
        help="seat that moves first, 0 .. players-1 (seats count from 0, as everywhere; "
        "default %(default)s)",
    )
    d = TimeControl()
    q = Policies()
    p.add_argument(
        "--decision-ms",
        type=int,
        default=d.decision_ms,
        help=f"time per decision (default {d.decision_ms})",
    )
    p.add_argument(
        "--bank-ms",
        type=int,
        default=d.bank_ms,
        help=f"bank per seat (default {d.bank_ms}; 0: none)",
    )
    p.add_argument(
        "--increment-ms",
        type=int,
        default=d.increment_ms,
        help=f"bank increment (default {d.increment_ms}; 0: none)",
    )
    p.add_argument(
        "--first-extra-ms",
        type=int,
        default=d.first_decision_extra_ms,
        help=f"extra time for a seat's first decision (default {d.first_decision_extra_ms})",
    )
    p.add_argument(
        "--grace-ms",
        type=int,
        default=d.grace_ms,
        help=f"lateness forgiven (default {d.grace_ms})",
    )
    p.add_argument(
        "--on-timeout",
        choices=("random", "forfeit"),
        default="random",
        help="random: play a random action and count a strike; forfeit: forfeit at once "
        "(default %(default)s)",
    )
    p.add_argument(
        "--max-strikes",
        type=int,
        default=q.max_strikes,
        help=f"strikes to forfeit (default {q.max_strikes})",
    )
    p.add_argument(
        "--max-rejections",
        type=int,
        default=q.max_rejections,
        help="illegal replies refused per decision before the timeout policy applies "
        f"(default {q.max_rejections})",
    )
    p.add_argument(
        "--reconnect-grace-ms",
        type=int,
        default=q.reconnect_grace_ms,
        help=f"time a disconnected bot has to reconnect (default {q.reconnect_grace_ms})",
    )


def check_players(args: argparse.Namespace) -> None:
    """CommandError unless ``--ruleset`` is played by ``--players`` players: named before
    anything that depends on the count (the --bot commands, the start seat)."""
    try:
        get_ruleset(args.ruleset, args.players)
    except EngineError as exc:
        raise CommandError(str(exc)) from None


def settings_from_args(args: argparse.Namespace, names: tuple[str, ...] = ()) -> MatchSettings:
    """Validated match settings from the options; CommandError names a bad value."""
    check_players(args)
    if not 0 <= args.start_seat < args.players:
        raise CommandError(
            f"--start-seat must be a seat of the {args.players}-player match, "
            f"0..{args.players - 1} (seats count from 0), got {args.start_seat}"
        )
    try:
        return MatchSettings(
            ruleset=args.ruleset,
            players=args.players,
            seed=args.seed,
            start_seat=args.start_seat,
            time=TimeControl(
                decision_ms=args.decision_ms,
                bank_ms=args.bank_ms,
                increment_ms=args.increment_ms,
                first_decision_extra_ms=args.first_extra_ms,
                grace_ms=args.grace_ms,
            ),
            policies=Policies(
                on_timeout=TimeoutPolicy.FORFEIT
                if args.on_timeout == "forfeit"
                else TimeoutPolicy.RANDOM_ACTION,
                max_strikes=args.max_strikes,
                max_rejections=args.max_rejections,
                reconnect_grace_ms=args.reconnect_grace_ms,
            ),
            seat_names=names,
        )
    except ConfigError as exc:
        raise CommandError(str(exc)) from None


def existing_database(db: str, what: str = "tournament database") -> str:
    """``db`` when it names a database that exists (a URL other than SQLite's is for its
    server to answer); CommandError naming it when it is a file that does not: opening it
    would create an empty one at a mistyped path."""
    path = db.removeprefix("sqlite:///") if db.startswith("sqlite:///") else db
    if "://" not in path and not Path(path).is_file():
        raise CommandError(f"no {what} at {db}")
    return db


@dataclass(frozen=True)
class ServerTls:
    """A listener's TLS files, read and checked (all None: plaintext)."""

    cert: bytes | None = None
    key: bytes | None = None
    client_ca: bytes | None = None


def add_server_tls_options(p: argparse.ArgumentParser) -> None:
    """--tls-cert, --tls-key and --tls-client-ca of a server (``serve``, ``ladder serve``)."""
    p.add_argument("--tls-cert", help="server certificate (PEM) to serve TLS")
    p.add_argument("--tls-key", help="server private key (PEM, unencrypted)")
    p.add_argument("--tls-client-ca", help="CA (PEM) that client certificates must chain to (mTLS)")


def server_tls(args: argparse.Namespace) -> ServerTls:
    """The TLS files the options name, checked before anything listens: a key that is not
    the certificate's, an expired certificate, a file of the wrong kind or unreadable is a
    CommandError naming it (gRPC would only fail to listen, with no reason)."""
    if (args.tls_cert is None) != (args.tls_key is None):
        raise CommandError("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        raise CommandError("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)")
    if args.tls_cert is None:
        return ServerTls()
    try:
        cert, key = check_key_pair(args.tls_cert, args.tls_key)
        client_ca = check_ca(args.tls_client_ca, "client CA") if args.tls_client_ca else None
    except TlsFileError as exc:
        raise CommandError(str(exc)) from None
    return ServerTls(cert, key, client_ca)


#: The environment variable ``--organiser-token`` defaults to.
TOKEN_ENV = "MEDINA_ORGANISER_TOKEN"


def _token(value: str) -> str:
    """An organiser token as given: an empty one is a mistake (``--organiser-token
    "$MEDINA_ORGANISER_TOKEN"`` with the variable unset), never "no token"."""
    if not value.strip():
        raise argparse.ArgumentTypeError(
            f"the organiser token is empty (the option, or {TOKEN_ENV} set to nothing): give "
            f"the token, or leave both out for none"
        )
    return value


#: The shortest time a seconds option takes: below a millisecond nothing is timed.
MIN_SECONDS = 0.001


def seconds(maximum: float) -> Callable[[str], float]:
    """An argparse ``type`` for a duration in seconds, ``MIN_SECONDS`` to ``maximum``:
    argparse names the option and the value it refuses (0, a negative, ``nan``, ``inf``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
        if not MIN_SECONDS <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"{text!r}: must be {MIN_SECONDS:g} to {maximum:g} seconds"
            )
        return value

    return parse


def add_organiser_token_option(p: argparse.ArgumentParser, text: str) -> None:
    """``--organiser-token``, defaulting to ``MEDINA_ORGANISER_TOKEN``; absent (None) when
    neither is given, refused when empty."""
    p.add_argument(
        "--organiser-token",
        type=_token,
        default=os.environ.get(TOKEN_ENV),
        help=f"{text} (env {TOKEN_ENV})",
    )


def add_client_limit_options(p: argparse.ArgumentParser, streams: str) -> None:
    """``--max-streams-per-client`` (``streams``: what it counts, for the help) and
    ``--limit-loopback``, as ``serve`` and ``ladder serve`` take them."""
    d = Limits()
    p.add_argument(
        "--max-streams-per-client",
        type=int,
        default=d.max_streams_per_client,
        help=f"{streams} per client address, 0 for no limit (default "
        f"{d.max_streams_per_client}); loopback clients are not limited unless --limit-loopback",
    )
    p.add_argument(
        "--limit-loopback",
        action="store_true",
        help="count clients on this machine too (e.g. behind a local proxy that does not limit)",
    )


def client_limits(args: argparse.Namespace) -> Limits:
    """The per-client limits ``add_client_limit_options`` read; CommandError for a negative
    ``--max-streams-per-client`` (0 is a value: no limit)."""
    if args.max_streams_per_client < 0:
        raise CommandError(
            f"--max-streams-per-client {args.max_streams_per_client}: must be 0 (no limit) or more"
        )
    return Limits(
        max_streams_per_client=args.max_streams_per_client, limit_loopback=args.limit_loopback
    )


def add_client_tls_options(p: argparse.ArgumentParser, starts_bots: bool = True) -> None:
    """--tls-ca, --tls-cert and --tls-key of an organiser's command that dials ``--server``
    (``match``, ``tournament run``/``worker``, ``web``): the SDK's options, the same meaning.
    ``starts_bots``: the command starts bot processes, which are given the same files."""
    what = "dial --server over TLS (a `serve --tls-cert ...`)"
    g = p.add_argument_group(
        "TLS", what + ("; the bots started get them too" if starts_bots else "")
    )
    g.add_argument("--tls-ca", metavar="FILE", help="CA (PEM) that signed the server's certificate")
    g.add_argument(
        "--tls-cert", metavar="FILE", help="client certificate (PEM) for mutual TLS (--tls-key too)"
    )
    g.add_argument("--tls-key", metavar="FILE", help="the client certificate's key (PEM)")


def client_tls_from_args(args: argparse.Namespace) -> ClientTls | None:
    """The TLS settings of ``--tls-ca``/``--tls-cert``/``--tls-key`` (None: in clear),
    checked as the SDK checks them; CommandError naming a bad file, a certificate without
    its key, or TLS options without ``--server`` (the command's own server is in clear)."""
    given = [
        f"--{o.replace('_', '-')}" for o in ("tls_ca", "tls_cert", "tls_key") if getattr(args, o)
    ]
    if given and not args.server:
        raise CommandError(
            f"{'/'.join(given)}: for dialling --server over TLS; without --server this command "
            "runs its own server on 127.0.0.1, in clear"
        )
    try:
        return client_tls(args.tls_ca, args.tls_cert, args.tls_key)
    except TlsFileError as exc:
        raise CommandError(str(exc)) from None


def records_directory(path: str) -> Path:
    """``--records``: the directory, created when missing; CommandError when it cannot be
    created or written, before a server starts (its first match would fail to create its
    record, and an organiser would learn it from a refused CreateMatch)."""
    directory = Path(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".medina-write-check-"):
            pass
    except OSError as exc:
        raise CommandError(
            f"--records {path}: cannot write match records there ({exc.strerror or exc})"
        ) from None
    return directory


#: What each sandbox limit bounds, for its ``--sandbox-KEY`` help (the unit named where the
#: key does not count it, so "cores" reads once).
SANDBOX_HELP = {
    "memory_mb": "resident memory (MiB) of a bot's processes together",
    "cpu_s": "CPU time (s) of a bot's processes together over a game",
    "cores": "CPUs a bot may run on",
    "processes": "processes and threads a bot may have at once",
    "output_kb": "what a bot may write (KiB) to its log and its log directory",
    "tmp_mb": "size (MiB) of a bot's private /tmp",
}


def add_sandbox_options(p: argparse.ArgumentParser, from_file: bool = False) -> None:
    """--sandbox and one --sandbox-KEY option per limit (docs/sandbox.md). ``from_file``: the
    command reads a tournament file, whose ``[sandbox]`` limits the options change."""
    g = p.add_argument_group(
        "sandbox", "run the bots in bubblewrap under limits (needs root; docs/sandbox.md)"
    )
    base = (
        "each with its limits from the file ([sandbox] and its own sandbox = {...}), else "
        "the defaults below"
        if from_file
        else "with the defaults below"
    )
    g.add_argument(
        "--sandbox",
        action="store_true",
        help=f"sandbox every bot, {base}; each option below changes one limit for every bot",
    )
    d = SandboxLimits()
    for key in BOUNDS:
        g.add_argument(
            f"--sandbox-{key.replace('_', '-')}",
            dest=f"sandbox_{key}",
            type=int,
            metavar="N",
            help=f"{SANDBOX_HELP[key]} (default {getattr(d, key)}); implies --sandbox",
        )


def sandbox_changes(args: argparse.Namespace) -> dict[str, int] | None:
    """The limits given on the command line, or None when no sandbox was asked for
    ({} for a bare --sandbox)."""
    changes = {k: getattr(args, f"sandbox_{k}") for k in BOUNDS}
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes and not getattr(args, "sandbox", False):
        return None
    return changes


def sandbox_limits(
    args: argparse.Namespace, base: SandboxLimits | None = None
) -> SandboxLimits | None:
    """``base`` (else the defaults) with the command line's limits, when a sandbox was asked
    for; else ``base``. CommandError names a bad value."""
    changes = sandbox_changes(args)
    if changes is None:
        return base
    try:
        limits = (base or SandboxLimits()).with_changes(changes)
        check()
    except SandboxConfigError as exc:
        raise CommandError(f"--sandbox-{exc.key.replace('_', '-')}: {exc}") from None
    except SandboxError as exc:
        raise CommandError(str(exc)) from None
    return limits


def is_loopback(host: str) -> bool:
    """Whether a listen address is this machine only (a host name counts as reachable from
    outside: it may resolve anywhere)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def add_records_reserve_option(parser: argparse.ArgumentParser) -> None:
    """``--records-reserve-mb``: the free space kept where records go (``serve``, ``ladder
    serve``)."""
    parser.add_argument(
        "--records-reserve-mb",
        type=float,
        default=DEFAULT_RESERVE_MB,
        help="keep this much free space (MB) where records go: below it CreateMatch is "
        "refused (UNAVAILABLE, RECORD_UNWRITABLE, a retry hint) so that the matches in play "
        f"can finish their records (default {DEFAULT_RESERVE_MB}; 0: none)",
    )
