"""A tournament file (TOML): the bots, the variants, the format, the clock; validated in full
before anything is played, every error naming the file, the key and its line."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import shlex
import shutil
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from medina.engine import RULESETS
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.errors import ConfigError
from medina.sandbox import SandboxConfigError, SandboxLimits

FORMATS = ("round-robin", "gauntlet")
#: What to do with a bot that fails its entry game: stop the run, drop the bot, or skip it.
VALIDATION = ("stop", "drop", "off")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
#: Round robin: beyond this many groups (k-subsets of the bots), a balanced sample is played.
MAX_GROUPS = 10_000


class TournamentConfigError(ValueError):
    """The tournament file is wrong; the message names the file, the key and its line."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One bot: its name in the standings and how to start it (one process per seat)."""

    name: str
    command: tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    #: Its sandbox's limits; None: it runs unsandboxed.
    sandbox: SandboxLimits | None = None

    def directory(self, base_dir: Path) -> Path:
        """Where it runs (its ``cwd``, else the tournament file's directory): the one
        directory a sandbox lets it write to."""
        return (base_dir / self.cwd) if self.cwd else base_dir


@dataclass(frozen=True, slots=True)
class Variant:
    """A rule set and a player count the tournament plays."""

    ruleset: str
    players: int


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A validated tournament file. ``games`` counts games per variant; with ``paired``, each
    setup seed is played once per seat rotation of the same bots (``players`` games)."""

    name: str
    bots: tuple[BotSpec, ...]
    variants: tuple[Variant, ...]
    format: str = "round-robin"
    candidates: tuple[str, ...] = ()
    games: int = 0
    paired: bool = True
    seed: int = 1
    until_separated: bool = False
    min_games: int = 0
    time: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    records: str | None = None
    #: Where relative paths (cwd, records) are taken from: the file's directory.
    base_dir: str = "."
    #: Entry validation before the first game (``VALIDATION``); not part of the digest.
    validation: str = "stop"
    #: Bots of the file dropped by entry validation, with the reason: (name, reason).
    dropped: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> str:
        """The configuration as canonical JSON (stored with the tournament; its hash tells a
        changed file from the one the tournament started with)."""
        data = asdict(self)
        data["time"] = asdict(self.time)
        data["policies"] = {**asdict(self.policies), "on_timeout": self.policies.on_timeout.name}
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @property
    def digest(self) -> str:
        """A hash of what decides the games (not where records go)."""
        data = json.loads(self.to_json())
        data.pop("records", None)
        data.pop("base_dir", None)
        data.pop("validation", None)
        # files from before entry validation and sandboxes hash as they did
        if not data["dropped"]:
            data.pop("dropped")
        for bot in data["bots"]:
            if bot["sandbox"] is None:
                bot.pop("sandbox")
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @classmethod
    def from_json(cls, text: str) -> TournamentConfig:
        """The inverse of ``to_json``."""
        d = json.loads(text)
        return cls(
            name=d["name"],
            bots=tuple(
                BotSpec(
                    name=b["name"],
                    command=tuple(b["command"]),
                    cwd=b["cwd"],
                    env=tuple((k, v) for k, v in b["env"]),
                    sandbox=SandboxLimits(**b["sandbox"]) if b.get("sandbox") else None,
                )
                for b in d["bots"]
            ),
            variants=tuple(Variant(v["ruleset"], v["players"]) for v in d["variants"]),
            format=d["format"],
            candidates=tuple(d["candidates"]),
            games=d["games"],
            paired=d["paired"],
            seed=d["seed"],
            until_separated=d["until_separated"],
            min_games=d["min_games"],
            time=TimeControl(**d["time"]),
            policies=Policies(
                on_timeout=TimeoutPolicy[d["policies"]["on_timeout"]],
                max_strikes=d["policies"]["max_strikes"],
                max_rejections=d["policies"]["max_rejections"],
                reconnect_grace_ms=d["policies"]["reconnect_grace_ms"],
            ),
            records=d["records"],
            base_dir=d["base_dir"],
            validation=d.get("validation", "stop"),
            dropped=tuple((n, r) for n, r in d.get("dropped", ())),
        )

    def without(self, dropped: Sequence[tuple[str, str]]) -> TournamentConfig:
        """This tournament without the bots named in ``dropped`` ((name, reason) pairs),
        which it remembers. TournamentConfigError when too few bots are left to play."""
        if not dropped:
            return self
        gone = {name for name, _ in dropped}
        unknown = sorted(gone - {b.name for b in self.bots})
        if unknown:
            raise TournamentConfigError(f"cannot drop {', '.join(unknown)}: no such bot")
        bots = tuple(b for b in self.bots if b.name not in gone)
        candidates = tuple(c for c in self.candidates if c not in gone)
        names = ", ".join(sorted(gone))
        if self.format == "gauntlet":
            if not candidates:
                raise TournamentConfigError(f"no candidate is left after dropping {names}")
            field_size = len(bots) - len(candidates)
            need = max(v.players for v in self.variants) - 1
            if field_size < need:
                raise TournamentConfigError(
                    f"{field_size} field bots are left after dropping {names}; the gauntlet "
                    f"needs {need}"
                )
        else:
            need = max(v.players for v in self.variants)
            if len(bots) < need:
                raise TournamentConfigError(
                    f"{len(bots)} bots are left after dropping {names}; {need}-player games "
                    f"need {need}"
                )
        return replace(self, bots=bots, candidates=candidates, dropped=(*self.dropped, *dropped))

    def bot(self, name: str) -> BotSpec:
        """A bot by name (KeyError when there is none)."""
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    def settings(self, variant: Variant, seed: int, seat_bots: tuple[str, ...]) -> MatchSettings:
        """The match settings of one game."""
        return MatchSettings(
            ruleset=variant.ruleset,
            players=variant.players,
            seed=seed,
            time=self.time,
            policies=self.policies,
            seat_names=seat_bots,
        )


_TOP_KEYS = {
    "name",
    "bots",
    "variants",
    "format",
    "candidates",
    "games",
    "paired",
    "seed",
    "until_separated",
    "min_games",
    "clock",
    "policies",
    "records",
    "validation",
    "sandbox",
}
_CLOCK_KEYS = {
    "decision_ms": "decision_ms",
    "bank_ms": "bank_ms",
    "increment_ms": "increment_ms",
    "first_extra_ms": "first_decision_extra_ms",
    "grace_ms": "grace_ms",
}
_POLICY_KEYS = ("on_timeout", "max_strikes", "max_rejections", "reconnect_grace_ms")


class _Where:
    """Finds the line of a key (or of the k-th ``[[table]]``) in the file's text, for errors."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def table_line(self, table: str, index: int | None = None) -> int | None:
        seen = -1
        for n, line in enumerate(self.lines, 1):
            s = line.strip()
            if index is None and re.match(rf"^\[\s*{re.escape(table)}\s*\]", s):
                return n
            if index is not None and re.match(rf"^\[\[\s*{re.escape(table)}\s*\]\]", s):
                seen += 1
                if seen == index:
                    return n
        return None

    def key_line(self, key: str, table: str | None = None, index: int | None = None) -> int | None:
        start = 1
        if table is not None:
            found = self.table_line(table, index)
            if found is None:
                return None
            start = found + 1
        for n in range(start, len(self.lines) + 1):
            s = self.lines[n - 1].strip()
            if n > start and table is not None and s.startswith("["):
                break
            if table is None and s.startswith("["):
                break
            if re.match(rf"^{re.escape(key)}\s*=", s):
                return n
        return None

    def error(
        self, what: str, key: str | None = None, table: str | None = None, index: int | None = None
    ) -> TournamentConfigError:
        line = None
        if key is not None:
            line = self.key_line(key, table, index)
            if line is None and table is None:  # a key written as a table: [key], [[key]]
                line = self.table_line(key) or self.table_line(key, 0)
        if line is None and table is not None:
            line = self.table_line(table, index)
        place = f"{self.path}"
        if line is not None:
            place += f":{line}"
        label = ""
        if table is not None:
            label = f"[[{table}]] #{index + 1}" if index is not None else f"[{table}]"
            if key is not None:
                label += f" {key}"
        elif key is not None:
            label = key
        return TournamentConfigError(f"{place}: {label + ': ' if label else ''}{what}")


def load(path: str | Path) -> TournamentConfig:
    """Read and validate a tournament file; TournamentConfigError names what is wrong."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise TournamentConfigError(f"{p}: no such tournament file") from None
    except OSError as exc:
        raise TournamentConfigError(f"{p}: cannot read it: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TournamentConfigError(f"{p}: not valid TOML: {exc}") from None
    return parse(data, _Where(p, text), p.resolve().parent)


def _did_you_mean(key: str, known: set[str]) -> str:
    """`` (did you mean 'bots'?)`` for a near miss of a known key, else ''."""
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _typed(w: _Where, value: Any, kind: type, what: str, key: str, **where: Any) -> Any:
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise w.error(f"must be {what}, got {value!r}", key, **where)
    return value


def parse(data: dict[str, Any], w: _Where, base_dir: Path) -> TournamentConfig:
    """Validate parsed TOML (see ``load``)."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        line = w.key_line(unknown[0]) or w.table_line(unknown[0]) or w.table_line(unknown[0], 0)
        hint = _did_you_mean(unknown[0], _TOP_KEYS)
        raise TournamentConfigError(
            f"{w.path}{f':{line}' if line else ''}: unknown key(s) {', '.join(unknown)}{hint}; "
            f"known: {', '.join(sorted(_TOP_KEYS))}"
        )
    if "name" not in data:
        raise w.error('the tournament needs a name (name = "...")')
    name = _typed(w, data["name"], str, "a string", "name")
    if not NAME_RE.match(name):
        raise w.error(
            f"{name!r} is not a valid name: 1-64 letters, digits, '_', '.', '+', '-', "
            "starting with a letter or digit",
            "name",
        )
    sandbox = _sandbox(w, data.get("sandbox"), None)
    bots = _bots(w, data.get("bots"), base_dir, sandbox)
    variants = _variants(w, data.get("variants"))
    fmt = _typed(w, data.get("format", "round-robin"), str, "a string", "format")
    if fmt not in FORMATS:
        raise w.error(f"unknown format {fmt!r}; choose {' or '.join(FORMATS)}", "format")
    names = {b.name for b in bots}
    candidates: tuple[str, ...] = ()
    if "candidates" in data:
        raw = _typed(w, data["candidates"], list, "a list of bot names", "candidates")
        for c in raw:
            if c not in names:
                raise w.error(
                    f"{c!r} is not one of the bots ({', '.join(sorted(names))})", "candidates"
                )
        candidates = tuple(raw)
        if len(set(candidates)) != len(candidates):
            raise w.error("a bot is named twice", "candidates")
    if fmt == "gauntlet":
        if not candidates:
            raise w.error('a gauntlet needs candidates = ["bot", ...]', "format")
        field_size = len(bots) - len(candidates)
        for v in variants:
            if field_size < v.players - 1:
                raise w.error(
                    f"a {v.players}-player gauntlet needs at least {v.players - 1} bots besides "
                    f"the candidates, there are {field_size}",
                    "candidates",
                )
    elif candidates:
        raise w.error('candidates are for format = "gauntlet"', "candidates")
    else:
        for v in variants:
            if len(bots) < v.players:
                raise w.error(
                    f"{v.players}-player games need at least {v.players} bots, there are "
                    f"{len(bots)}",
                    "bots",
                )
    paired = _typed(w, data.get("paired", True), bool, "true or false", "paired")
    if "games" not in data:
        raise w.error("how many games per variant? (games = N)")
    games = _typed(w, data["games"], int, "a whole number", "games")
    if games < 1:
        raise w.error(f"must be at least 1, got {games}", "games")
    if paired:
        for v in variants:
            if games % v.players:
                raise w.error(
                    f"{games} is not a multiple of {v.players}: paired setups play each seed once "
                    f"per seat rotation ({v.players} games for {v.ruleset} {v.players}p); use a "
                    "multiple or paired = false",
                    "games",
                )
    seed = _typed(w, data.get("seed", 1), int, "a whole number", "seed")
    if not 0 <= seed < 2**63:
        raise w.error(f"must be 0..2**63-1, got {seed}", "seed")
    until = _typed(w, data.get("until_separated", False), bool, "true or false", "until_separated")
    min_games = _typed(w, data.get("min_games", 0), int, "a whole number", "min_games")
    if not 0 <= min_games <= games:
        raise w.error(f"must be 0..games ({games}), got {min_games}", "min_games")
    time = _clock(w, data.get("clock", {}))
    policies = _policies(w, data.get("policies", {}))
    records = data.get("records")
    if records is not None:
        _typed(w, records, str, "a directory path", "records")
    validation = _typed(w, data.get("validation", "stop"), str, "a string", "validation")
    if validation not in VALIDATION:
        raise w.error(
            f"unknown validation {validation!r}; choose {', '.join(map(repr, VALIDATION))}",
            "validation",
        )
    cfg = TournamentConfig(
        name=name,
        bots=bots,
        variants=variants,
        format=fmt,
        candidates=candidates,
        games=games,
        paired=paired,
        seed=seed,
        until_separated=until,
        min_games=min_games,
        time=time,
        policies=policies,
        records=records,
        base_dir=str(base_dir),
        validation=validation,
    )
    return cfg


def _sandbox(w: _Where, raw: Any, base: SandboxLimits | None, **where: Any) -> SandboxLimits | None:
    """A ``[sandbox]`` table (or a bot's ``sandbox = {...}``/``true``/``false``) over
    ``base`` (the tournament's, for a bot)."""
    key = "sandbox" if "index" in where else None
    if raw is None:
        return base
    if raw is False:
        return None
    if raw is True:
        return base or SandboxLimits()
    if not isinstance(raw, dict):
        raise w.error(
            f"must be a table of limits, true or false, got {raw!r}", key or "sandbox", **where
        )
    try:
        return (base or SandboxLimits()).with_changes(raw)
    except SandboxConfigError as exc:
        if key is None:  # the [sandbox] table: the line of the key in it
            raise w.error(str(exc), exc.key, table="sandbox") from None
        raise w.error(str(exc), key, **where) from None


def _bots(
    w: _Where, raw: Any, base_dir: Path, sandbox: SandboxLimits | None = None
) -> tuple[BotSpec, ...]:
    if raw is None:
        raise w.error("no bots: add [[bots]] tables with name and command")
    if not isinstance(raw, list) or not all(isinstance(b, dict) for b in raw):
        raise w.error("bots must be [[bots]] tables", "bots")
    out: list[BotSpec] = []
    seen: set[str] = set()
    for i, b in enumerate(raw):
        where: dict[str, Any] = {"table": "bots", "index": i}
        unknown = sorted(set(b) - {"name", "command", "cwd", "env", "sandbox"})
        if unknown:
            raise w.error(
                f"unknown key(s) {', '.join(unknown)}"
                f"{_did_you_mean(unknown[0], {'name', 'command', 'cwd', 'env', 'sandbox'})}; "
                "known: command, cwd, env, name, sandbox",
                unknown[0],
                **where,
            )
        if "name" not in b:
            raise w.error("a bot needs a name", **where)
        name = _typed(w, b["name"], str, "a string", "name", **where)
        if not NAME_RE.match(name):
            raise w.error(
                f"{name!r} is not a valid bot name: 1-64 letters, digits, '_', '.', '+', '-'",
                "name",
                **where,
            )
        if name in seen:
            raise w.error(f"bot {name!r} is named twice", "name", **where)
        seen.add(name)
        if "command" not in b:
            raise w.error(f"bot {name!r} needs a command", **where)
        cmd = b["command"]
        if isinstance(cmd, str):
            try:
                argv = tuple(shlex.split(cmd))
            except ValueError as exc:
                raise w.error(f"cannot split {cmd!r}: {exc}", "command", **where) from None
        elif isinstance(cmd, list) and all(isinstance(a, str) for a in cmd):
            argv = tuple(cmd)
        else:
            raise w.error("must be a string or a list of strings", "command", **where)
        if not argv:
            raise w.error("is empty", "command", **where)
        cwd = b.get("cwd")
        if cwd is not None:
            _typed(w, cwd, str, "a directory path", "cwd", **where)
            if not (base_dir / cwd).is_dir():
                raise w.error(f"no such directory {cwd!r} (from {base_dir})", "cwd", **where)
        program = argv[0]
        if program not in ("python", "python3"):
            run_dir = base_dir / cwd if cwd else base_dir
            found = shutil.which(program) or ((run_dir / program).exists() and "/" in program)
            if not found:
                raise w.error(f"program {program!r} is not found on PATH", "command", **where)
        env_raw = b.get("env", {})
        if not isinstance(env_raw, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env_raw.items()
        ):
            raise w.error(
                'must be a table of strings, e.g. env = { KEY = "value" }', "env", **where
            )
        limits = _sandbox(w, b.get("sandbox"), sandbox, **where)
        out.append(BotSpec(name, argv, cwd, tuple(sorted(env_raw.items())), limits))
    if len(out) < 2:
        raise w.error(f"a tournament needs at least 2 bots, there are {len(out)}", "bots")
    return tuple(out)


def _variants(w: _Where, raw: Any) -> tuple[Variant, ...]:
    if raw is None:
        return (Variant("medina-v2", 4),)
    if not isinstance(raw, list) or not raw or not all(isinstance(v, dict) for v in raw):
        raise w.error("variants must be [[variants]] tables with ruleset and players", "variants")
    out: list[Variant] = []
    for i, v in enumerate(raw):
        where: dict[str, Any] = {"table": "variants", "index": i}
        unknown = sorted(set(v) - {"ruleset", "players"})
        if unknown:
            raise w.error(
                f"unknown key(s) {', '.join(unknown)}"
                f"{_did_you_mean(unknown[0], {'ruleset', 'players'})}; known: players, ruleset",
                unknown[0],
                **where,
            )
        ruleset = _typed(w, v.get("ruleset", "medina-v2"), str, "a string", "ruleset", **where)
        if ruleset not in RULESETS:
            raise w.error(
                f"unknown ruleset {ruleset!r}; choose {', '.join(RULESETS)}", "ruleset", **where
            )
        if "players" not in v:
            raise w.error("how many players? (players = N)", **where)
        players = _typed(w, v["players"], int, "a whole number", "players", **where)
        try:
            MatchSettings(ruleset=ruleset, players=players, seed=1)
        except ConfigError as exc:
            raise w.error(str(exc), "players", **where) from None
        variant = Variant(ruleset, players)
        if variant in out:
            raise w.error(f"{ruleset} with {players} players is listed twice", **where)
        out.append(variant)
    return tuple(out)


def _clock(w: _Where, raw: Any) -> TimeControl:
    if not isinstance(raw, dict):
        raise w.error("must be a [clock] table", "clock")
    unknown = sorted(set(raw) - set(_CLOCK_KEYS))
    if unknown:
        raise w.error(
            f"unknown key(s) {', '.join(unknown)}{_did_you_mean(unknown[0], set(_CLOCK_KEYS))}; "
            f"known: {', '.join(_CLOCK_KEYS)}",
            unknown[0],
            table="clock",
        )
    kwargs = {}
    for key, attr in _CLOCK_KEYS.items():
        if key in raw:
            kwargs[attr] = _typed(w, raw[key], int, "whole milliseconds", key, table="clock")
    try:
        return TimeControl(**kwargs)
    except ConfigError as exc:
        raise w.error(str(exc), table="clock") from None


def _policies(w: _Where, raw: Any) -> Policies:
    if not isinstance(raw, dict):
        raise w.error("must be a [policies] table", "policies")
    unknown = sorted(set(raw) - set(_POLICY_KEYS))
    if unknown:
        raise w.error(
            f"unknown key(s) {', '.join(unknown)}{_did_you_mean(unknown[0], set(_POLICY_KEYS))}; "
            f"known: {', '.join(_POLICY_KEYS)}",
            unknown[0],
            table="policies",
        )
    kwargs: dict[str, Any] = {}
    if "on_timeout" in raw:
        value = raw["on_timeout"]
        if value not in ("random", "forfeit"):
            raise w.error(
                f'must be "random" or "forfeit", got {value!r}', "on_timeout", table="policies"
            )
        kwargs["on_timeout"] = (
            TimeoutPolicy.FORFEIT if value == "forfeit" else TimeoutPolicy.RANDOM_ACTION
        )
    for key in _POLICY_KEYS[1:]:
        if key in raw:
            kwargs[key] = _typed(w, raw[key], int, "a whole number", key, table="policies")
    try:
        return Policies(**kwargs)
    except ConfigError as exc:
        raise w.error(str(exc), table="policies") from None
