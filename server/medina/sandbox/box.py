"""One sandboxed bot process, the arena's side: its user id, its seat directory (the unix
socket to the arena, the relay's status file, a log directory), the command line that
starts it under prlimit, taskset and bubblewrap, and what is left after it exits.

Bubblewrap runs as root here (its privileged mode), without a user namespace, so that the
bot can run under a user id of its own: the kernel counts the processes of a user id
(RLIMIT_NPROC), which root is exempt from, and that id owns nothing on the machine.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import importlib.util
import itertools
import json
import os
import shutil
import ssl
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import relay, seccomp
from .forward import Forwarder, split_address
from .limits import SandboxLimits

#: The sandbox's user ids: UID_BASE + n, outside the ranges Debian and systemd hand out.
UID_BASE = 1_900_000_000
UID_SLOTS = 4096
#: Where the seat directory appears inside the sandbox.
INSIDE = Path("/run/medina")
#: Directories every sandbox sees as empty (then the interpreter, the bot's directory and
#: the seat directory are mounted back over them where needed).
MASKED = ("/tmp", "/var/tmp", "/run", "/root", "/home")
#: The environment a sandboxed bot starts from (then its own and MEDINA_*): nothing of the
#: arena's secrets (organiser token, database URLs) reaches it.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")

_cores = itertools.count()


class SandboxError(Exception):
    """The sandbox cannot be used here; the message says why and what to install."""


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """How to sandbox one bot: its limits, its directory (resolved; read-write, everything else
    read-only), and what to hide from it: directories (records, output directories, other
    bots' directories), emptied, and files (the tournament file), read as empty. The
    organiser's working directory is hidden as well."""

    limits: SandboxLimits
    bot_dir: Path
    hide: tuple[Path, ...] = field(default=())

    def __post_init__(self) -> None:
        # Resolved here, outside: a relative path or one through ``..`` (a bot's ``cwd =
        # "../mybot"``) would be followed inside the sandbox, through directories hidden
        # there (the tournament file's), and bwrap could not chdir into it.
        object.__setattr__(self, "bot_dir", self.bot_dir.resolve())


def check() -> None:
    """SandboxError unless bubblewrap, prlimit and taskset are installed and the arena runs
    as root (each bot gets a user id of its own)."""
    if shutil.which("bwrap") is None:
        raise SandboxError(
            "the sandbox needs bubblewrap (bwrap), which is not installed; on Debian: "
            "apt-get install bubblewrap"
        )
    for tool in ("prlimit", "taskset"):
        if shutil.which(tool) is None:
            raise SandboxError(f"the sandbox needs {tool} (Debian's util-linux)")
    if os.geteuid() != 0:
        raise SandboxError(
            "the sandbox needs root: each bot runs under a user id of its own (as isolate "
            "does), which only root can switch to"
        )


def _lock_dir() -> Path:
    path = Path(tempfile.gettempdir()) / "medina-sandbox-uids"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


class Box:
    """The resources of one sandboxed bot process; ``close`` gives them back."""

    def __init__(self, spec: SandboxSpec, address: str, tls: ssl.SSLContext | None = None) -> None:
        check()
        self.spec = spec
        self.address = address
        self.uid, self._lock = _take_uid()
        self.seat_dir = Path(tempfile.mkdtemp(prefix="medina-sandbox-"))
        os.chmod(self.seat_dir, 0o755)
        self.logs = self.seat_dir / "logs"
        self.logs.mkdir()
        os.chmod(self.logs, 0o1777)
        self.status = self.seat_dir / "status"
        try:
            _host, port = split_address(address)
        except ValueError:
            port = 50051
        self.port = port
        # A TLS arena is dialled by the forwarder: the bot inside speaks to the relay in clear.
        self.forwarder = Forwarder(self.seat_dir / "arena.sock", address, tls)
        self._verdict: str | None = None
        self._read = False

    async def start(self) -> None:
        """Listen for the sandbox's connections to the arena."""
        await self.forwarder.start()

    @property
    def inside_address(self) -> str:
        """Where the bot finds the arena inside the sandbox."""
        return f"127.0.0.1:{self.port}"

    def environment(self, extra: Mapping[str, str]) -> dict[str, str]:
        """The bot's environment: a few of the arena's variables, then ``extra``."""
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env.update(HOME="/tmp", TMPDIR="/tmp", USER="medina-bot")
        env.update(extra)
        env["MEDINA_LOG_DIR"] = str(INSIDE / "logs")
        return env

    def command(self, argv: Sequence[str], seccomp_fd: int | None) -> list[str]:
        """prlimit, taskset and bwrap around the relay and the bot's ``argv``."""
        lim = self.spec.limits
        # The kernel's limits, inherited by everything in the sandbox: backstops above the
        # relay's, so that a bot going over a limit reaches the relay's (and is stopped and
        # named for it) before the kernel refuses it anything -- a bot whose threads are
        # refused at the kernel's limit may hang just under it, where polling cannot see it.
        # RLIMIT_DATA counts reserved, untouched memory too (thread stacks): it lies well
        # above, twice the limit and 256 MiB more.
        data = 2 * lim.memory_bytes + (256 << 20)
        nproc = lim.processes + max(4, lim.processes // 4)
        prlimit = [
            "prlimit",
            f"--nproc={nproc}",
            f"--data={data}",
            f"--cpu={lim.cpu_s + 1}:{lim.cpu_s + 2}",
            f"--fsize={lim.output_bytes}",
            "--core=0",
            "--",
        ]
        taskset = ["taskset", "--cpu-list", ",".join(map(str, _cores_for(lim.cores)))]
        bwrap = [
            shutil.which("bwrap") or "bwrap",
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "sandbox",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
        ]
        if seccomp_fd is not None:
            bwrap += ["--seccomp", str(seccomp_fd)]
        bwrap += self._mounts(argv)
        bwrap += ["--chdir", str(self.spec.bot_dir), "--"]
        opts = {
            "port": self.port,
            "unix": INSIDE / "arena.sock",
            "status": INSIDE / "status",
            "uid": self.uid,
            "gid": self.uid,
            "memory": lim.memory_bytes,
            "cpu": lim.cpu_s,
            "processes": lim.processes,
            "output": lim.output_bytes,
            "logs": INSIDE / "logs",
        }
        relay_argv = [sys.executable, "-I", "-S", "-c", _relay_source()]
        for key, value in opts.items():
            relay_argv += [f"--{key}", str(value)]
        return [*prlimit, *taskset, *bwrap, *relay_argv, "--", *argv]

    def _mounts(self, argv: Sequence[str]) -> list[str]:
        """The filesystem, read-only but for the bot's directory and the private /tmp;
        shallower mounts first, so deeper ones lie over them (at the same depth: hidden
        over the runtime, the bot's directory over both). Files the bot's command names by
        path (its program, its script) are mounted back, read-only, where hidden."""
        lim = self.spec.limits
        bot_dir = self.spec.bot_dir
        dirs, files = _hidden(bot_dir, self.spec.hide)
        emptied = [Path(m) for m in MASKED] + dirs
        ops: list[tuple[int, int, list[str]]] = []

        def add(path: str | Path, rank: int, op: list[str]) -> None:
            ops.append((len(Path(path).parts), rank, op))

        for masked in MASKED:
            if Path(masked).is_dir() and not Path(masked).is_symlink():
                size = ["--size", str(lim.tmp_mb << 20)]
                add(masked, 0, [*size, "--perms", "1777" if "tmp" in masked else "0755",
                                "--tmpfs", masked])  # fmt: skip
        runtime = _runtime_paths(emptied)
        for path in runtime:
            add(path, 1, ["--ro-bind", str(path), str(path)])
        shown = [*runtime, bot_dir]
        # what an emptied directory already hides is left alone: a mount point made there
        # would show its name
        for hidden in dirs:
            if _visible(hidden, emptied, shown):
                add(hidden, 2, ["--perms", "0755", "--tmpfs", str(hidden)])
        add(bot_dir, 3, ["--bind", str(bot_dir), str(bot_dir)])
        named = {(bot_dir / a).resolve() for a in argv if os.sep in a and "{" not in a}
        for path in sorted(p for p in named if p.is_file() and p not in files):
            if not _visible(path, emptied, shown):
                add(path, 3, ["--ro-bind", str(path), str(path)])
        files = [f for f in files if _visible(f, emptied, shown)]
        if files:
            empty = self.seat_dir / "empty"
            empty.touch(mode=0o444)
            for hidden in files:
                add(hidden, 4, ["--ro-bind", str(empty), str(hidden)])
        add(INSIDE, 4, ["--bind", str(self.seat_dir), str(INSIDE)])
        ops.sort(key=lambda o: o[:2])
        out = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        out += ["--size", str(lim.tmp_mb << 20), "--perms", "1777", "--tmpfs", "/dev/shm"]
        for _depth, _rank, op in ops:
            if op[0] in ("--bind", "--ro-bind"):
                # the directories bwrap makes on the way to a mount point are root's 0700:
                # make them 0755 first, so that the bot's user can get through
                target = Path(op[2])
                for parent in reversed(target.parents):
                    if any(parent != e and _within(parent, e) for e in emptied):
                        out += ["--perms", "0755", "--dir", str(parent)]
            out += op
        return out

    def verdict(self) -> str | None:
        """The limit the relay stopped the bot at (e.g. ``memory limit 512 MiB reached``),
        or None."""
        if not self._read:
            try:
                data = json.loads(self.status.read_text())
                self._verdict = f"sandbox: {data['detail']}"
                self._read = True
            except FileNotFoundError:
                pass
            except (OSError, ValueError, KeyError, TypeError):
                self._verdict, self._read = "sandbox: unreadable status", True
        return self._verdict

    def keep_logs(self, log_path: Path) -> None:
        """Move the files the bot wrote to its log directory beside its seat log, as
        ``SEATLOG-STEM.NAME.log`` (regular files only, no more than the output limit; see
        ``keep_logs``)."""
        keep_logs(self.logs, log_path, self.spec.limits.output_bytes)

    async def close(self) -> None:
        """Stop forwarding, remove the seat directory, give the user id back."""
        self.verdict()
        await self.forwarder.close()
        shutil.rmtree(self.seat_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            os.close(self._lock)


def kept_prefix(log_path: Path) -> str:
    """What a file ``NAME`` written to the log directory of the bot whose seat log is
    ``log_path`` is kept as, ``NAME`` left off: ``/abs/dir/MATCH.seat0.`` (see ``keep_logs``;
    ``.log`` is added unless NAME ends with it)."""
    return f"{log_path.parent.resolve() / log_path.stem}."


def keep_logs(directory: Path, log_path: Path, budget: int | None = None) -> None:
    """Move the regular files a bot wrote to its log directory ``directory`` beside its seat
    log, in name order while they fit in ``budget`` bytes (None: all), each as
    ``SEATLOG-STEM.NAME.log`` (``.log`` added unless NAME ends with it: a stdio bridge's
    ``bot-x-123.log`` is kept as ``MATCH.seat0.bot-x-123.log``). A kept name never replaces a
    file already there (the seat log, another kept file): ``SEATLOG-STEM.NAME.1.log`` and so
    on. Every kept name ends in ``.log``, so none reads as a match record (``x.jsonl``)."""
    left = budget
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or (left is not None and info.st_size > left):
                continue
            if left is not None:
                left -= info.st_size
            with contextlib.suppress(OSError):
                name = Path(kept_prefix(log_path)).name + entry.name.removesuffix(".log")
                _keep(Path(entry.path), info, log_path.parent, name)


def _keep(source: Path, info: os.stat_result, into: Path, base: str) -> None:
    """Move ``source`` to ``into`` as ``BASE.log`` or, where that is taken, ``BASE.1.log``
    and so on. A file of this process's user is linked there (never replacing
    anything); one of another user's (a sandbox's) is copied into a new file of this
    user's, as is one on another filesystem."""
    link = info.st_uid == os.geteuid()
    n = 0
    while True:
        target = into / (f"{base}.log" if n == 0 else f"{base}.{n}.log")
        try:
            if link:
                os.link(source, target, follow_symlinks=False)
            else:
                _copy_new(source, target)
        except FileExistsError:
            n += 1
            continue
        except OSError as exc:
            if not (link and exc.errno == errno.EXDEV):
                raise
            link = False
            continue
        source.unlink()
        return


def _copy_new(source: Path, target: Path) -> None:
    """Copy ``source`` (never through a symbolic link) to ``target``, created here
    (FileExistsError when it exists); nothing is left of it when the copy fails."""
    with open(os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as src:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with open(fd, "wb") as dst:
                shutil.copyfileobj(src, dst)
        except BaseException:
            target.unlink(missing_ok=True)
            raise


def seccomp_fd() -> int | None:
    """A file descriptor holding the seccomp filter for bwrap (None where there is none);
    the caller closes it once the sandbox started."""
    program = seccomp.program()
    if program is None:
        return None
    fd = os.memfd_create("medina-sandbox-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _take_uid() -> tuple[int, int]:
    """A user id no other sandbox on this machine holds, and the lock that holds it."""
    locks = _lock_dir()
    for n in range(UID_SLOTS):
        fd = os.open(locks / f"{UID_BASE + n}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue
            raise
        return UID_BASE + n, fd
    raise SandboxError(f"all {UID_SLOTS} sandbox user ids are in use")


def _cores_for(count: int) -> list[int]:
    """``count`` of the CPUs this process may use, taken in turn so that sandboxes spread."""
    cpus = sorted(os.sched_getaffinity(0))
    if count >= len(cpus):
        return cpus
    start = next(_cores)
    return sorted(cpus[(start * count + i) % len(cpus)] for i in range(count))


def _hidden(bot_dir: Path, hide: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """The directories to empty and the files to blank for a bot in ``bot_dir``: ``hide``
    and the organiser's working directory (where tournament files, other tournaments'
    output directories and other bots' directories usually lie), but never the bot's own
    directory (it is mounted back over any of them that holds it), the interpreter's
    directories, or one that holds the system's Python (``/``, ``/usr``)."""
    system = Path(sys.base_prefix).resolve()
    interpreter = {Path(p).resolve() for p in (sys.prefix, os.path.dirname(sys.executable))}
    dirs: list[Path] = []
    files: list[Path] = []
    for raw in (*hide, Path.cwd()):
        path = raw.resolve()
        if path.is_dir():
            kept = path == bot_dir or path in interpreter or _within(system, path)
            if not kept and path not in dirs:
                dirs.append(path)
        elif path.is_file() and path not in files:
            files.append(path)
    return dirs, files


def _runtime_paths(emptied: Sequence[Path]) -> list[Path]:
    """What the arena's Python needs (its prefixes, its import path, its packages) and the
    arena's checkout, where ``emptied`` directories would hide them: mounted back
    read-only. The packages are named on their own, not only through the checkout: a
    working directory hidden in the checkout hides the checkout, not them."""
    # sys.path[0] is the script's directory or the current one: not the interpreter's
    candidates = [sys.base_prefix, sys.prefix, *sys.path[1:], os.path.dirname(sys.executable)]
    # The arena's own packages: an editable install finds them by a hook, not sys.path.
    for package in ("medina", "medina_client", "medina_envs"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin is not None:
            candidates.append(str(Path(spec.origin).resolve().parents[1]))
    # A checkout under /tmp or /home stays as visible as one anywhere else (read-only),
    # with its SDK and scripts (bot files named from it).
    import medina

    root = Path(medina.__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        candidates.append(str(root))
    found: list[Path] = []
    for raw in candidates:
        if not raw:
            continue
        path = Path(raw).resolve()
        if path.is_dir() and path not in found and any(_within(path, e) for e in emptied):
            found.append(path)
    return found


def _visible(path: Path, emptied: Sequence[Path], shown: Sequence[Path]) -> bool:
    """Whether ``path`` would be seen: the deepest of the ``emptied`` and ``shown``
    directories holding it (``path`` itself aside) is a shown one, or there is none (an
    emptied directory is mounted over a shown one at the same place)."""
    holders = [(len(d.parts), d in emptied) for d in (*emptied, *shown)
               if d != path and _within(path, d)]  # fmt: skip
    return not holders or not max(holders)[1]


def _within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _relay_source() -> str:
    return Path(relay.__file__).read_text()
