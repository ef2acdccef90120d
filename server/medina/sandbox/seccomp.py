"""The sandbox's seccomp filter, as the classic BPF program bubblewrap loads (``--seccomp
FD``): a short deny list on x86-64, everything else allowed.

Denied, because they would undo a limit: ``sched_setaffinity`` (a bot would widen the cores
it was given), ``unshare``, ``setns`` and ``clone`` with a namespace flag (a new user
namespace could mount a tmpfs outside the memory accounting), ``clone3`` (its flags are out
of a filter's reach; it answers ENOSYS, and the C library falls back to ``clone``), and any
system call made through the 32-bit or x32 entry points (which a filter on x86-64 numbers
would not see). Elsewhere than x86-64 there is no filter (``program`` returns None) and the
docs say so.
"""

from __future__ import annotations

import errno
import platform
import struct

# BPF instruction classes and fields (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

# struct seccomp_data offsets
_NR, _ARCH, _ARG0 = 0, 4, 16

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000

# x86-64 system call numbers
SCHED_SETAFFINITY, CLONE, UNSHARE, SETNS, CLONE3 = 203, 56, 272, 308, 435
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
CLONE_NAMESPACES |= 0x20000000 | 0x40000000


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program() -> bytes | None:
    """The filter's bytes (an array of ``struct sock_filter``), or None off x86-64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    deny = _ERRNO | errno.EPERM
    nosys = _ERRNO | errno.ENOSYS
    insns = [
        _insn(_LD_W_ABS, 0, 0, _ARCH),  # 0
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),  # 1: x86-64 -> 3
        _insn(_RET_K, 0, 0, deny),  # 2: i386 entry point
        _insn(_LD_W_ABS, 0, 0, _NR),  # 3
        _insn(_JSET_K, 0, 1, _X32_BIT),  # 4: x32 -> 5, else 6
        _insn(_RET_K, 0, 0, deny),  # 5
        _insn(_JEQ_K, 6, 0, SCHED_SETAFFINITY),  # 6 -> 13
        _insn(_JEQ_K, 5, 0, UNSHARE),  # 7 -> 13
        _insn(_JEQ_K, 4, 0, SETNS),  # 8 -> 13
        _insn(_JEQ_K, 5, 0, CLONE3),  # 9 -> 15
        _insn(_JEQ_K, 0, 3, CLONE),  # 10: clone -> 11, anything else -> 14
        _insn(_LD_W_ABS, 0, 0, _ARG0),  # 11: clone's flags (low 32 bits)
        _insn(_JSET_K, 0, 1, CLONE_NAMESPACES),  # 12: a namespace -> 13, else 14
        _insn(_RET_K, 0, 0, deny),  # 13
        _insn(_RET_K, 0, 0, _ALLOW),  # 14
        _insn(_RET_K, 0, 0, nosys),  # 15
    ]
    return b"".join(insns)
