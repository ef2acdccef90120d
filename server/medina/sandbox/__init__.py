"""Running submitted bots sandboxed: bubblewrap (a read-only filesystem but the bot's own
directory, no network but a relay to the arena), the kernel's limits (memory, CPU time,
cores, processes and threads, output), a seccomp filter that keeps them, and a user id of
its own per bot process. See docs/sandbox.md.

Layers: ``limits`` the validated limits, ``seccomp`` the filter, ``relay`` the first process
inside the sandbox (stdlib only), ``forward`` the arena's end of the relay, ``box`` one
sandboxed process's resources and command line."""

from .box import Box, SandboxError, SandboxSpec, check, keep_logs, kept_prefix, seccomp_fd
from .limits import SandboxConfigError, SandboxLimits

__all__ = [
    "Box",
    "SandboxConfigError",
    "SandboxError",
    "SandboxLimits",
    "SandboxSpec",
    "check",
    "keep_logs",
    "kept_prefix",
    "seccomp_fd",
]
