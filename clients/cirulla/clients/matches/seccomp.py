"""The seccomp filter of every bot's sandbox: no kernel keyring.

The kernel's keyrings are not a namespace bubblewrap can give a bot: the keys of one
user (every bot runs as the runner's user) are listed in ``/proc/keys`` to each process
of that user, whatever its sandbox, descriptions included, and a runner's session
keyring is shared by every process it starts. A bot that knew a hand could put it in a
key's description for its own other process, playing the duplicate twin, to read
(tests/confinement/test_hostile_sandbox.py). No bot needs a keyring to play, so the
three calls that reach them (``add_key``, ``request_key``, ``keyctl``) fail with ENOSYS,
as if the kernel had none (Docker's default profile refuses them for the same reason).

The filter is a classic BPF program written here (no libseccomp needed), given to
bwrap on a file descriptor (``--seccomp FD``); it knows the calls' numbers on x86-64
(with its i386 and x32 entries, which a 64-bit process may use too) and on arm64 (with
its 32-bit entry). On another machine there is no filter, and the runner does not say
so: the keyring stays a channel there.
"""

from __future__ import annotations

import os
import platform
import struct

#: seccomp_data: the call's number at offset 0, the architecture (AUDIT_ARCH_*) at 4.
_NR, _ARCH = 0, 4
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ENOSYS = 0x00050000 | 38  # SECCOMP_RET_ERRNO | ENOSYS
_X32 = 0x40000000  # __X32_SYSCALL_BIT

#: add_key, request_key, keyctl by architecture, for each machine.
KEYRING_CALLS: dict[str, dict[int, tuple[int, ...]]] = {
    "x86_64": {
        0xC000003E: (248, 249, 250, _X32 | 248, _X32 | 249, _X32 | 250),  # x86-64, x32
        0x40000003: (286, 287, 288),  # i386 (int 0x80)
    },
    "aarch64": {
        0xC00000B7: (217, 218, 219),  # arm64
        0x40000028: (309, 310, 311),  # arm (32-bit)
    },
}


def program(machine: str | None = None) -> bytes | None:
    """The filter (``struct sock_filter`` entries, this machine's byte order) for
    ``machine`` (default: this one's); None where the calls' numbers are not known."""
    arches = KEYRING_CALLS.get(machine or platform.machine())
    if arches is None:
        return None
    blocks = [(arch, calls) for arch, calls in arches.items()]
    # layout: load arch; per arch: jeq arch (else skip its block), load nr, one jeq per
    # call to DENY, allow; then allow (another arch), DENY
    size = 1 + sum(len(calls) + 3 for _, calls in blocks) + 2
    deny = size - 1
    code: list[tuple[int, int, int, int]] = [(_LD_ABS, 0, 0, _ARCH)]
    for arch, calls in blocks:
        code.append((_JEQ, 0, len(calls) + 2, arch))
        code.append((_LD_ABS, 0, 0, _NR))
        for call in calls:
            code.append((_JEQ, deny - (len(code) + 1), 0, call))
        code.append((_RET, 0, 0, _ALLOW))
    code.append((_RET, 0, 0, _ALLOW))
    code.append((_RET, 0, 0, _ENOSYS))
    assert len(code) == size
    return b"".join(struct.pack("=HBBI", *entry) for entry in code)


def filter_fd() -> int | None:
    """A file descriptor holding ``program()`` from its start, for ``bwrap --seccomp``
    (the caller passes it to the child and closes it); None without a filter."""
    data = program()
    if data is None:
        return None
    fd = os.memfd_create("cirulla-seccomp")  # close-on-exec: pass_fds hands it on
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
