"""The sandbox's own first process, inside bubblewrap: it relays the bot's TCP connections
to the arena, starts the bot under its own user id, and stops the whole sandbox when the bot
goes over a limit, saying which in a status file.

Standard library only, and no import of medina: the launcher runs this file's text with
``python -I -c`` (the sandbox need not be able to import anything of the arena's). Run as
root with only CAP_SETUID and CAP_SETGID (bwrap drops every other capability), in the
sandbox's own network and process namespaces:

- it listens on ``127.0.0.1:PORT`` (the sandbox's own loopback, where the bot is told the
  arena is) and copies each connection's bytes to and from the unix socket ``--unix``,
  which the launcher forwards to the arena;
- it forks the bot, which drops to ``--uid``/``--gid`` (no supplementary groups), takes
  the umask 000 and executes the command after ``--``; the kernel's limits (rlimits, CPU
  affinity, the seccomp filter) were set on the sandbox before it started and are
  inherited;
- every ``POLL_S`` it adds up what the bot's processes use (tasks, resident memory, CPU
  time, output written) and, at a limit, writes ``{"limit": ..., "detail": ...}`` to
  ``--status`` and exits: the namespace's init then ends, and the kernel kills every process
  left in the sandbox. It also exits when the bot does, with the bot's exit status (128 +
  the signal when it was killed), after judging how it ended (SIGXCPU: the CPU limit,
  SIGXFSZ: the output limit, a peak resident size at the memory limit).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import signal
import socket
import sys
import time

POLL_S = 0.05
CHUNK = 65536


class Pipe:
    """One connection of the bot, relayed to the arena's unix socket."""

    def __init__(self, inside: socket.socket, outside: socket.socket) -> None:
        self.ends = (inside, outside)
        self.pending: dict[socket.socket, bytearray] = {inside: bytearray(), outside: bytearray()}
        self.closed = False

    def other(self, end: socket.socket) -> socket.socket:
        return self.ends[1] if end is self.ends[0] else self.ends[0]


class Relay:
    """The relay's state: listening socket, pipes, the bot and its limits."""

    def __init__(self, opts: dict[str, str], command: list[str]) -> None:
        self.opts = opts
        self.command = command
        self.uid = int(opts["uid"])
        self.gid = int(opts["gid"])
        self.memory = int(opts.get("memory", "0"))
        self.cpu = float(opts.get("cpu", "0"))
        self.tasks = int(opts.get("processes", "0"))
        self.output = int(opts.get("output", "0"))
        self.logs = opts.get("logs", "")
        self.sel = selectors.DefaultSelector()
        self.pipes: dict[socket.socket, Pipe] = {}
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", int(opts["port"])))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.sel.register(self.listener, selectors.EVENT_READ)
        self.pid = 0
        self.peak_rss = 0

    # -- the bot ---------------------------------------------------------------------

    def start(self) -> None:
        """Fork the bot: drop to its user, execute its command."""
        pid = os.fork()
        if pid == 0:
            try:
                self.listener.close()
                os.setgroups([])
                os.setgid(self.gid)
                os.setuid(self.uid)
                # Its user id changes from game to game (ids are handed out in turn): what
                # it creates in its directory must stay writable by its next game's user.
                os.umask(0)
                os.execvp(self.command[0], self.command)
            except OSError as exc:
                os.write(2, f"sandbox: cannot start {self.command[0]}: {exc.strerror}\n".encode())
            finally:
                os._exit(127)
        self.pid = pid

    # -- limits ----------------------------------------------------------------------

    def usage(self) -> tuple[int, int, float]:
        """Tasks (threads included), resident bytes and CPU seconds of the bot's processes.
        Resident bytes: the larger of their sum now and the highest peak of one of them
        (the kernel's high-water mark, so that a spike between two looks is seen)."""
        tasks = rss = ticks = peak = 0
        hz = os.sysconf("SC_CLK_TCK")
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/status") as f:
                    status = f.read()
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
            except OSError:
                continue  # gone meanwhile
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if int(fields.get("Uid", "0").split()[0]) != self.uid:
                continue
            tasks += int(fields.get("Threads", "1"))
            rss += int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
            peak = max(peak, int(fields.get("VmHWM", "0 kB").split()[0]) * 1024)
            after = stat.rsplit(")", 1)[1].split()
            ticks += sum(int(x) for x in after[11:15])  # utime stime cutime cstime
        return tasks, max(rss, peak), ticks / hz

    def written(self) -> int:
        """Bytes of output: the seat's log (our stdout) and the files in the log directory."""
        total = 0
        with contextlib.suppress(OSError):
            total += os.fstat(1).st_size
        if self.logs:
            with contextlib.suppress(OSError):
                for entry in os.scandir(self.logs):
                    with contextlib.suppress(OSError):
                        total += entry.stat(follow_symlinks=False).st_size
        return total

    def over(self) -> tuple[str, str] | None:
        """The limit the bot is over, if any: (name, detail)."""
        tasks, rss, cpu = self.usage()
        self.peak_rss = max(self.peak_rss, rss)
        if self.tasks and tasks >= self.tasks:
            return "processes", f"process limit {self.tasks} (processes and threads) reached"
        if self.memory and rss >= self.memory:
            return "memory", f"memory limit {_mib(self.memory)} reached"
        if self.cpu and cpu >= self.cpu:
            return "cpu", f"CPU time limit {self.cpu:g} s reached"
        if self.output and self.written() >= self.output:
            return "output", f"output limit {_kib(self.output)} reached"
        return None

    def judge_exit(self, status: int, peak_rss: int) -> tuple[str, str] | None:
        """What limit, if any, ended the bot (from how it ended and what it used)."""
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and self.cpu_used() >= self.cpu > 0):
                return "cpu", f"CPU time limit {self.cpu:g} s reached"
            if sig == signal.SIGXFSZ:
                return "output", f"output limit {_kib(self.output)} reached"
        # Python ignores SIGXFSZ: its writes fail (EFBIG) and it dies of the exception
        if self.output and self.written() >= self.output:
            return "output", f"output limit {_kib(self.output)} reached"
        if self.memory and max(peak_rss, self.peak_rss) >= self.memory:
            return "memory", f"memory limit {_mib(self.memory)} reached"
        return None

    def cpu_used(self) -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    # -- relaying --------------------------------------------------------------------

    def accept(self) -> None:
        try:
            inside, _ = self.listener.accept()
        except OSError:
            return
        outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            outside.connect(self.opts["unix"])
        except OSError as exc:
            os.write(2, f"sandbox: the arena is not reachable: {exc.strerror}\n".encode())
            inside.close()
            outside.close()
            return
        # small messages go at once both ways (gRPC does the same on its own sockets)
        inside.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for end in (inside, outside):
            end.setblocking(False)
        pipe = Pipe(inside, outside)
        for end in pipe.ends:
            self.pipes[end] = pipe
            self.sel.register(end, selectors.EVENT_READ)

    def close(self, pipe: Pipe) -> None:
        if pipe.closed:
            return
        pipe.closed = True
        for end in pipe.ends:
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(end)
            self.pipes.pop(end, None)
            end.close()

    def flush(self, pipe: Pipe, end: socket.socket) -> bool:
        """Send what waits for ``end``; watch it for writing while anything is left. False
        when the connection broke (and was closed)."""
        waiting = pipe.pending[end]
        if waiting:
            try:
                del waiting[: end.send(waiting)]
            except BlockingIOError:
                pass
            except OSError:
                self.close(pipe)
                return False
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if waiting else 0)
        self.sel.modify(end, events)
        return True

    def ready(self, end: socket.socket, events: int) -> None:
        pipe = self.pipes.get(end)
        if pipe is None or pipe.closed:
            return
        other = pipe.other(end)
        if events & selectors.EVENT_READ:
            try:
                data = end.recv(CHUNK)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data == b"":
                # One side is done: send what is left to the other, then close both.
                with contextlib.suppress(OSError):
                    other.setblocking(True)
                    other.settimeout(5)
                    other.sendall(pipe.pending[other])
                self.close(pipe)
                return
            if data:
                pipe.pending[other] += data
                if not self.flush(pipe, other):
                    return
        if events & selectors.EVENT_WRITE:
            self.flush(pipe, end)

    # -- the loop --------------------------------------------------------------------

    def run(self) -> int:
        self.start()
        next_check = 0.0
        while True:
            for key, events in self.sel.select(POLL_S):
                if key.fileobj is self.listener:
                    self.accept()
                else:
                    self.ready(key.fileobj, events)  # type: ignore[arg-type]
            done, status, rusage = os.wait4(self.pid, os.WNOHANG)
            if done:
                verdict = self.judge_exit(status, rusage.ru_maxrss * 1024)
                if verdict is not None:
                    self.report(*verdict)
                if os.WIFEXITED(status):
                    return os.WEXITSTATUS(status)
                return 128 + os.WTERMSIG(status)
            now = time.monotonic()
            if now >= next_check:
                next_check = now + POLL_S
                verdict = self.over()
                if verdict is not None:
                    self.report(*verdict)
                    os.write(2, f"sandbox: {verdict[1]}; the bot is stopped\n".encode())
                    return 137

    def report(self, limit: str, detail: str) -> None:
        with open(self.opts["status"], "w") as f:
            json.dump({"limit": limit, "detail": detail}, f)


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def _kib(n: int) -> str:
    return f"{n / 1024:g} KiB"


def parse(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """``--key value`` options, then ``--`` and the bot's command."""
    at = argv.index("--")
    opts: dict[str, str] = {}
    words = argv[:at]
    for i in range(0, len(words), 2):
        opts[words[i].removeprefix("--")] = words[i + 1]
    return opts, argv[at + 1 :]


def main() -> int:
    opts, command = parse(sys.argv[1:])
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    return Relay(opts, command).run()


if __name__ == "__main__":
    sys.exit(main())
