"""A tournament's configuration: the bots, the variants, the format, the clock, the
sandbox; as stored with the tournament (JSON). ``load`` reads and validates a file
(``reader``)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.sandbox import SandboxLimits

from .sprt import SprtBounds

FORMATS = ("round-robin", "gauntlet", "sprt")
#: What to do with a bot that fails its entry game: stop the run, drop the bot, or skip it.
VALIDATION = ("stop", "drop", "off")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
#: Round robin: beyond this many groups (k-subsets of the bots), a balanced sample is played.
MAX_GROUPS = 10_000


def invalid_name(name: str, what: str = "name") -> str:
    """Why ``name`` is not a valid ``what`` (``NAME_RE``), said in full."""
    return (
        f"{name!r} is not a valid {what}: 1-64 ASCII letters, digits, '_', '.', '+', "
        "'-', starting with an ASCII letter or digit"
    )


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
    #: format = "sprt": the bot the candidate is tested against, and the test's bounds.
    baseline: str = ""
    sprt: SprtBounds | None = None

    def records_dir(self, out: Path) -> Path:
        """Where ``tournament run`` writes this tournament's records: the file's ``records``
        key (from the file's directory), else ``out/records`` (``out``: the output
        directory)."""
        return Path(self.base_dir) / self.records if self.records else out / "records"

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
        text = json.dumps(_decisive(self.to_json()), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def differences(self, stored: str) -> list[str]:
        """What decides the games and differs between this configuration and ``stored``
        (another's ``to_json``), named as in the tournament file: ``bot 'b' (command,
        env)``, ``bot 'c' added``, ``clock``, ``policies``."""
        new, old = _decisive(self.to_json()), _decisive(stored)
        said: list[str] = []
        new_bots = {b["name"]: b for b in new.pop("bots")}
        old_bots = {b["name"]: b for b in old.pop("bots")}
        for name, bot in new_bots.items():
            if name not in old_bots:
                said.append(f"bot {name!r} added")
            elif bot != old_bots[name]:
                keys = sorted(
                    k for k in {*bot, *old_bots[name]} if bot.get(k) != old_bots[name].get(k)
                )
                said.append(f"bot {name!r} ({', '.join(keys)})")
        said += [f"bot {name!r} removed" for name in old_bots if name not in new_bots]
        if not said and list(new_bots) != list(old_bots):
            said.append("the order of the bots")
        said += [_FILE_KEYS.get(k, k) for k in sorted({*new, *old}) if new.get(k) != old.get(k)]
        return said

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
            baseline=d.get("baseline", ""),
            sprt=SprtBounds(**d["sprt"]) if d.get("sprt") else None,
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

    @property
    def pair_blocks(self) -> int:
        """format = "sprt": blocks per pair (1 for 2 players, 2 for 3-4: the candidate's and
        the baseline's on the same setup)."""
        return 1 if self.variants[0].players == 2 else 2

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


#: The file's names of the configuration's keys, where they differ.
_FILE_KEYS = {"time": "clock", "dropped": "bots dropped by entry validation"}


def _decisive(config: str) -> dict[str, Any]:
    """What of a configuration (``to_json``) decides the games: what its digest hashes."""
    data: dict[str, Any] = json.loads(config)
    data.pop("records", None)
    data.pop("base_dir", None)
    data.pop("validation", None)
    # files from before entry validation and sandboxes hash as they did
    if not data.get("dropped"):
        data.pop("dropped", None)
    for bot in data["bots"]:
        if bot.get("sandbox") is None:
            bot.pop("sandbox", None)
    if not data.get("baseline") and data.get("sprt") is None:
        data.pop("baseline", None)
        data.pop("sprt", None)
    return data


def load(path: str | Path) -> TournamentConfig:
    """Read and validate a tournament file (``reader.read``); TournamentConfigError names
    what is wrong."""
    from .reader import read  # the reader builds the classes above

    return read(path)
