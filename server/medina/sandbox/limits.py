"""What a sandboxed bot may use: a frozen, validated set of limits, read from a tournament
file's ``[sandbox]`` table (and a bot's own ``sandbox = {...}``) or from the command line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any


class SandboxConfigError(ValueError):
    """A sandbox limit is wrong; the message names the key and the value, ``key`` the key."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


#: key: (least, most, unit) of each limit.
BOUNDS: dict[str, tuple[int, int, str]] = {
    "memory_mb": (16, 1 << 20, "MiB"),
    "cpu_s": (1, 7 * 86400, "s"),
    "cores": (1, 4096, "cores"),
    "processes": (2, 1 << 20, "processes"),
    "output_kb": (1, 1 << 30, "KiB"),
    "tmp_mb": (1, 1 << 20, "MiB"),
}


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Limits of one sandboxed bot in one game (its whole process tree).

    ``memory_mb``: resident memory of all its processes together; ``cpu_s``: CPU time of
    all its processes together over the game; ``cores``: the CPUs it may run on (so it can
    never use more than that many at once); ``processes``: its processes and threads at
    once; ``output_kb``: what it writes to its log (stdout and stderr) and its log
    directory; ``tmp_mb``: its private ``/tmp`` (memory, emptied after the game).
    """

    memory_mb: int = 512
    cpu_s: int = 600
    cores: int = 1
    processes: int = 64
    output_kb: int = 10_240
    tmp_mb: int = 64

    def __post_init__(self) -> None:
        for key, (least, most, unit) in BOUNDS.items():
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool):
                raise SandboxConfigError(
                    f"{key} must be a whole number of {unit}, got {value!r}", key
                )
            if not least <= value <= most:
                raise SandboxConfigError(f"{key} must be {least}..{most} {unit}, got {value}", key)

    def with_changes(self, changes: Mapping[str, Any]) -> SandboxLimits:
        """These limits with some keys changed (SandboxConfigError naming an unknown key or a
        bad value)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise SandboxConfigError(
                f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
                unknown[0],
            )
        return replace(self, **dict(changes))

    def to_dict(self) -> dict[str, int]:
        """The limits by key (stored with a tournament)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def memory_bytes(self) -> int:
        """``memory_mb`` in bytes."""
        return self.memory_mb << 20

    @property
    def output_bytes(self) -> int:
        """``output_kb`` in bytes."""
        return self.output_kb << 10

    def describe(self) -> str:
        """One line for people: ``memory 512 MiB, CPU 600 s, 1 core, ...``."""
        return (
            f"memory {self.memory_mb} MiB, CPU {self.cpu_s} s, {self.cores} "
            f"core{'s' if self.cores > 1 else ''}, {self.processes} processes, output "
            f"{self.output_kb} KiB, /tmp {self.tmp_mb} MiB"
        )
