"""Reading a tournament file (TOML): every table checked, every error naming the file, the
line, the key and what is wrong, before anything is played."""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import tomllib
from pathlib import Path
from typing import Any

from medina.engine import RULESETS
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.errors import ConfigError
from medina.sandbox import SandboxConfigError, SandboxLimits

from .config import (
    FORMATS,
    NAME_RE,
    VALIDATION,
    BotSpec,
    TournamentConfig,
    TournamentConfigError,
    Variant,
    invalid_name,
)
from .sprt import SprtBounds, SprtConfigError

#: The most games per variant a file may ask for: the whole schedule is built and stored at
#: once (a billion games held memory growing for minutes with nothing said).
MAX_GAMES = 1_000_000
#: The largest setup seed stored (a signed 64-bit integer).
MAX_SEED = 2**63 - 1

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
    "baseline",
    "sprt",
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


def read(path: str | Path) -> TournamentConfig:
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
    unknown = set(data) - _TOP_KEYS
    if unknown:

        def line_of(key: str) -> int:
            return w.key_line(key) or w.table_line(key) or w.table_line(key, 0) or 0

        # In the file's order, each with its near miss: the first one named is the first
        # one found reading the file, and the line given is its own.
        ordered = sorted(unknown, key=lambda k: (line_of(k), k))
        line = line_of(ordered[0])
        said = "; ".join(
            f"{'' if k == ordered[0] else f'line {line_of(k)}: '}{k!r}{_did_you_mean(k, _TOP_KEYS)}"
            for k in ordered
        )
        raise TournamentConfigError(
            f"{w.path}{f':{line}' if line else ''}: unknown key(s) {said}; "
            f"known: {', '.join(sorted(_TOP_KEYS))}"
        )
    if "name" not in data:
        raise w.error('the tournament needs a name (name = "...")')
    name = _typed(w, data["name"], str, "a string", "name")
    if not NAME_RE.match(name):
        raise w.error(invalid_name(name), "name")
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
    elif fmt == "sprt":
        _check_sprt(w, data, bots, variants, candidates)
    elif candidates:
        raise w.error('candidates are for format = "gauntlet" or "sprt"', "candidates")
    else:
        for v in variants:
            if len(bots) < v.players:
                raise w.error(
                    f"{v.players}-player games need at least {v.players} bots, there are "
                    f"{len(bots)}",
                    "bots",
                )
    paired = _typed(w, data.get("paired", True), bool, "true or false", "paired")
    if fmt == "sprt" and not paired:
        raise w.error("an SPRT plays pairs of games: paired must be true", "paired")
    if "games" not in data:
        raise w.error("how many games per variant? (games = N)")
    games = _typed(w, data["games"], int, "a whole number", "games")
    if not 1 <= games <= MAX_GAMES:
        raise w.error(f"must be 1..{MAX_GAMES:,} (games per variant), got {games}", "games")
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
    # Each block of games plays seed + its number, and every seed is stored as a signed
    # 64-bit integer: the last block's must fit too.
    if not 0 <= seed <= MAX_SEED - games:
        raise w.error(
            f"must be 0..{MAX_SEED - games} (2**63-1 less the games: block b plays seed + b), "
            f"got {seed}",
            "seed",
        )
    until = _typed(w, data.get("until_separated", False), bool, "true or false", "until_separated")
    if until and fmt == "sprt":
        raise w.error("an SPRT stops at its own verdict, not when the standings separate",
                      "until_separated")  # fmt: skip
    if fmt == "sprt":
        k = variants[0].players
        size = k if k == 2 else 2 * k  # every seat rotation (for 3-4: of each of the two)
        if games % size:
            raise w.error(
                f"{games} is not a multiple of {size}: an SPRT pair is {size} games", "games"
            )
    else:
        for key in ("baseline", "sprt"):
            if key in data:
                raise w.error(f'{key} is for format = "sprt"', key)
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
        baseline=data.get("baseline", "") if fmt == "sprt" else "",
        sprt=_sprt(w, data.get("sprt", {})) if fmt == "sprt" else None,
    )
    return cfg


def _check_sprt(
    w: _Where,
    data: dict[str, Any],
    bots: tuple[BotSpec, ...],
    variants: tuple[Variant, ...],
    candidates: tuple[str, ...],
) -> None:
    """format = "sprt": one candidate, one baseline, one variant, enough field bots."""
    names = [b.name for b in bots]
    if len(candidates) != 1:
        raise w.error('an SPRT tests one candidate: candidates = ["bot"]', "candidates")
    if "baseline" not in data:
        raise w.error('an SPRT needs the bot to test against: baseline = "bot"', "format")
    baseline = _typed(w, data["baseline"], str, "a bot name", "baseline")
    if baseline not in names:
        raise w.error(f"{baseline!r} is not one of the bots ({', '.join(sorted(names))})",
                      "baseline")  # fmt: skip
    if baseline == candidates[0]:
        raise w.error("the baseline must be another bot than the candidate", "baseline")
    if len(variants) != 1:
        raise w.error("an SPRT plays one variant: give one [[variants]] table", "variants")
    k = variants[0].players
    field = len(bots) - 2
    if k == 2 and field:
        raise w.error(
            "a 2-player SPRT plays the candidate against the baseline only: the other "
            f"{field} bot(s) would never play",
            "bots",
        )
    if k > 2 and field < k - 1:
        raise w.error(
            f"a {k}-player SPRT needs at least {k - 1} bots besides the candidate and the "
            f"baseline (each plays with the same {k - 1}), there are {field}",
            "bots",
        )


def _sprt(w: _Where, raw: Any) -> SprtBounds:
    if not isinstance(raw, dict):
        raise w.error("must be a [sprt] table", "sprt")
    try:
        return SprtBounds.from_table(raw)
    except SprtConfigError as exc:
        raise w.error(str(exc), exc.key, table="sprt") from None


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
            raise w.error(invalid_name(name, "bot name"), "name", **where)
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
            missing = _missing_program(program, base_dir, cwd)
            if missing is not None:
                raise w.error(missing, "command", **where)
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


def _missing_program(program: str, base_dir: Path, cwd: str | None) -> str | None:
    """Why a bot's ``program`` cannot be found, or None: a name is looked up on PATH, a
    path is taken from the bot's directory (where it runs: its ``cwd``, else the tournament
    file's directory), not from the organiser's current one."""
    if os.sep not in program:
        return None if shutil.which(program) else f"program {program!r} is not found on PATH"
    path = (base_dir / cwd if cwd else base_dir) / program
    if path.exists():
        return None
    taken = "the bot's cwd" if cwd else "the tournament file's directory (the bot has no cwd)"
    return (
        f"program {program!r} is not found: no file {path} (a relative path is taken from {taken})"
    )


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
        raise _refused(w, exc, "clock", _CLOCK_KEYS) from None


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
        raise _refused(w, exc, "policies", {key: key for key in _POLICY_KEYS}) from None


def _refused(
    w: _Where, exc: ConfigError, table: str, keys: dict[str, str]
) -> TournamentConfigError:
    """The referee's refusal of a setting of ``table``, named by the file's own key (``keys``:
    the file's key of each setting) at its line, as the file's other errors are."""
    setting = exc.field.rpartition(".")[2]
    key = next((k for k, name in keys.items() if name == setting), None)
    if key is None:  # not one setting's fault
        return w.error(str(exc), table=table)
    return w.error(exc.problem, key, table=table)
