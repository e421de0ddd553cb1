"""Hostile bots against the sandbox itself, run through the real bubblewrap (and, where
it matters, the host's real control groups): what a bot tries from inside its sandbox
to write the host's files, raise its own limits or leave its namespaces.

This machine and CI run the runner as root, which a tournament organiser may do too
("it works unprivileged with user namespaces and as root", docs/tournament.md): bwrap
started by root kept every capability for the bot inside its namespaces, so a bot
remounted its read-only folders writable (and wrote the host's files as root), mounted
the cgroup filesystem and raised its own process limit and CPU quota, and made user
namespaces of its own. Without any capability it was still the host's uid 0, which may
write the kernel's settings in /proc/sys (767 files writable, ``kernel.core_pattern``
among them: a program the host runs as root).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cirulla.bots.cgroups import BotLimits, HostGroups, RunGroups
from cirulla.clients.matches import binds, sandbox, seccomp
from cirulla.clients.matches.relay import PER_ENDPOINT, ServerRelay
from cirulla.clients.matches.sandbox import Confinement
from cirulla.clients.matches.supervise import Child
from cirulla.server.app import start_server
from cirulla.server.bot_socket import MAX_STREAMS_PER_CONNECTION

STREAM_FLOOD = Path(__file__).parents[1] / "programs" / "stream_flood.py"

#: Each attempt prints ``ESCAPE <what>`` when it worked, ``HELD <what>`` when refused.
ESCAPES = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
MS_BIND, MS_REMOUNT = 4096, 32
folder = os.path.dirname(os.path.abspath(sys argv0))
def report(what, ok):
    print(('ESCAPE ' if ok else 'HELD ') + what, flush=True)
caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff:')][0]
report('capabilities ' + caps, int(caps, 16) != 0)
# its read-only folder (a bind of the host's) made writable, then written
libc.mount(None, folder.encode(), None, MS_REMOUNT | MS_BIND, None)
try:
    open(os.path.join(folder, 'WRITTEN'), 'w').write('owned')
    report('remount rw', True)
except OSError:
    report('remount rw', False)
# the cgroup filesystem mounted, its own process limit raised
os.makedirs('/tmp/cg', exist_ok=True)
if libc.mount(b'cg', b'/tmp/cg', b'cgroup', 0, b'pids') == 0:
    try:
        open('/tmp/cg/pids.max', 'w').write('max')
        report('pids.max raised', True)
    except OSError:
        report('pids.max raised', False)
else:
    report('cgroup mounted', False)
# the kernel's settings (as the host's root: kernel.core_pattern runs a program as root
# on the host at the next crash); opened for writing only, nothing written
try:
    os.close(os.open('/proc/sys/kernel/core_pattern', os.O_WRONLY))
    report('sysctl opened for writing', True)
except OSError:
    report('sysctl opened for writing', False)
# a user namespace of its own (its kernel's attack surface, every capability in it)
pid = os.fork()
if pid == 0:
    os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
report('nested user namespace', os.waitpid(pid, 0)[1] == 0)
""".replace("sys argv0", "sys.argv[0]")


@pytest.fixture
def groups() -> Iterator[RunGroups]:
    host = HostGroups.detect()
    assert not isinstance(host, str), host  # CI and this machine have them: no skip
    run = host.new_run()
    try:
        yield run
    finally:
        run.close()


def test_a_bot_cannot_remount_mount_nest_or_set_the_kernel(
    tmp_path: Path, groups: RunGroups
) -> None:
    folder = tmp_path / "escaper"
    folder.mkdir()
    program = folder / "escape.py"
    program.write_text(ESCAPES)
    limits = BotLimits(processes=64)
    group = groups.bot("escaper", limits)
    try:
        box = sandbox.Sandbox(limits, readable=(folder,), group=group)
        argv, env, preexec = box.wrap([sys.executable, str(program)], {}, server_socket=None)
        done = subprocess.run(
            argv, env=env, preexec_fn=preexec, capture_output=True, text=True, timeout=60
        )
        pids_max = (group.paths["pids"] / "pids.max").read_text().strip()
    finally:
        group.close()
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("ESCAPE", "HELD"))]
    assert len(lines) == 5, done.stdout
    assert not [line for line in lines if line.startswith("ESCAPE")], done.stdout
    assert not (folder / "WRITTEN").exists()
    assert pids_max == "64"


def test_the_interpreter_probe_has_no_capability_either(tmp_path: Path) -> None:
    """The probe that asks a bot's interpreter where it imports from runs that
    interpreter's ``.pth`` code (an author's venv in the bot's folder is the author's
    code) in a sandbox that binds the whole machine read-only: as root it remounted it
    writable, and could write the kernel's settings."""
    bwrap = sandbox.bwrap_path()
    assert bwrap is not None
    args = binds.probe_args(bwrap, sys.executable, ())
    assert args is not None
    target = tmp_path / "WRITTEN"
    code = (
        "import ctypes, os\n"
        "try:\n"
        "    os.close(os.open('/proc/sys/kernel/core_pattern', os.O_WRONLY))\n"
        "    print('SYSCTL ESCAPE')\n"
        "except OSError:\n"
        "    print('SYSCTL HELD')\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.mount(None, b'/', None, 32 | 4096, None)\n"
        f"open({str(target)!r}, 'w').write('owned')\n"
    )
    argv = [*args[: args.index("--") + 1], sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert "Read-only file system" in done.stderr, done.stderr
    assert "SYSCTL HELD" in done.stdout, done.stdout
    assert not target.exists()


def test_a_stream_flood_holds_few_calls_in_the_match_server(tmp_path: Path) -> None:
    """A bot opens 3,000 Play streams through its relay endpoint and sends nothing on
    them: the match server's bot socket held every one of them (a call and its task each,
    about 20 KB, until the 30 s hello timeout: 40,000 streams grew a server by 650 MB, in
    a ladder's own process). It now holds at most ``MAX_STREAMS_PER_CONNECTION`` per
    connection, so a process's 16 connections hold a bounded number."""
    folder = Path(tempfile.mkdtemp(prefix="cirulla-sf-"))  # a unix socket's path is short
    sock = folder / "bot.sock"

    async def main() -> tuple[int, str]:
        running = await start_server("127.0.0.1:0", bot_socket=sock)
        try:
            with ServerRelay(f"unix:{sock}") as relay:
                endpoint = relay.endpoint()
                argv, env, preexec = sandbox.Sandbox(readable=(STREAM_FLOOD,)).wrap(
                    [sys.executable, str(STREAM_FLOOD), "--streams", "3000", "--hold", "60"],
                    {"CIRULLA_SERVER": "x"},
                    server_socket=endpoint.path,
                )
                base = len(asyncio.all_tasks())
                proc = await asyncio.create_subprocess_exec(
                    *argv, env=env, preexec_fn=preexec, stdout=subprocess.PIPE
                )
                assert proc.stdout is not None
                reading = asyncio.ensure_future(proc.stdout.readline())
                said, held = "", 0
                deadline = time.monotonic() + 60
                settled: float | None = None
                while time.monotonic() < deadline:
                    await asyncio.wait({reading}, timeout=0.05)
                    if reading.done() and settled is None:
                        said = reading.result().decode()
                        settled = time.monotonic() + 3  # what it opened reaches the server
                    if settled is not None and time.monotonic() > settled - 1:
                        # what the server holds once the flood is out (not the first
                        # burst, which may come before the client reads the settings)
                        held = max(held, len(asyncio.all_tasks()) - base)
                    if settled is not None and time.monotonic() > settled:
                        break
                proc.kill()
                await proc.wait()
                return held, said
        finally:
            await running.stop(0)

    try:
        held, said = asyncio.run(main())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert "STREAMS opened=3000" in said, said
    # the server's tasks: 3 per call waiting for its Hello (the call's, the handler's
    # read and its wait); before, the 3,000 streams held about 9,000
    assert held <= 3 * PER_ENDPOINT * MAX_STREAMS_PER_CONNECTION + 32, held


#: ``send MARK``: leaves MARK in keys of the keyrings it reaches (its user's, its user
#: session's, its session's), says ``SENT``, waits; ``recv MARK``: looks for it in
#: /proc/keys and in its session keyring, says ``SEEN ...`` for each find.
KEYS = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD_KEY, KEYCTL, DESCRIBE, READ = 248, 250, 6, 11
mode, mark = sys.argv[1], sys.argv[2].encode()
if mode == 'send':
    for ring in (-4, -5, -3):
        got = libc.syscall(ADD_KEY, b'user', mark + b'-%d' % -ring, b'7d 3s 1b', 8, ring)
        print('add_key', ring, got, ctypes.get_errno(), flush=True)
    print('SENT', flush=True)
    time.sleep(60)
else:
    for line in open('/proc/keys').read().splitlines():
        if mark.decode() in line:
            print('SEEN /proc/keys', line, flush=True)
    ids = ctypes.create_string_buffer(4096)
    n = libc.syscall(KEYCTL, READ, -3, ids, 4096)
    for i in range(0, max(n, 0), 4):
        serial = int.from_bytes(ids.raw[i:i + 4], sys.byteorder)
        text = ctypes.create_string_buffer(512)
        if libc.syscall(KEYCTL, DESCRIBE, serial, text, 512) > 0 and mark in text.value:
            print('SEEN session keyring', text.value, flush=True)
    print('LOOKED', flush=True)
"""


def test_a_bot_leaves_no_key_for_another_to_read(tmp_path: Path) -> None:
    """Keyrings are no namespace: every process of the runner's user listed a key one bot
    added (its description in /proc/keys), and the runner's session keyring was every
    bot's. A bot that knew a hand could so spell it for its twin's process."""
    folder = tmp_path / "keys"
    folder.mkdir()
    program = folder / "keys.py"
    program.write_text(KEYS)
    mark = f"cirulla-hand-{os.getpid()}-{time.monotonic_ns()}"
    with ServerRelay("127.0.0.1:9") as relay:
        confinement = Confinement(relay)
        sender = Child(
            [sys.executable, str(program), "send", mark], tmp_path / "send.log",
            env={}, confinement=confinement,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while "SENT" not in (tmp_path / "send.log").read_text():
                assert sender.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            receiver = Child(
                [sys.executable, str(program), "recv", mark], tmp_path / "recv.log",
                env={}, confinement=confinement,
            )  # fmt: skip
            assert receiver.wait(60) == 0
            receiver.stop()
        finally:
            sender.stop(grace=0.5)
    sent = (tmp_path / "send.log").read_text()
    seen = (tmp_path / "recv.log").read_text()
    assert "LOOKED" in seen, seen
    assert "SEEN" not in seen, (sent, seen)
    assert "add_key -4 -1 38" in sent, sent  # ENOSYS: as if the kernel had no keyrings


def run_filter(program: bytes, arch: int, nr: int) -> int:
    """What a classic BPF seccomp program returns for call ``nr`` of ``arch`` (the
    instructions ``seccomp.program`` writes: load word, jump if equal, return)."""
    code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    data = {0: nr, 4: arch}
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == 0x20:
            acc, pc = data[k], pc + 1
        elif op == 0x15:
            pc += 1 + (jt if acc == k else jf)
        else:
            assert op == 0x06
            return k


@pytest.mark.parametrize("machine", sorted(seccomp.KEYRING_CALLS))
def test_the_keyring_filter_refuses_those_calls_and_lets_every_other_through(
    machine: str,
) -> None:
    """Each machine's program, run instruction by instruction: the keyring calls of each
    of its architectures get ENOSYS, their neighbours and another architecture's pass."""
    program = seccomp.program(machine)
    assert program is not None
    enosys, allow = 0x00050000 | 38, 0x7FFF0000
    for arch, calls in seccomp.KEYRING_CALLS[machine].items():
        for nr in calls:
            assert run_filter(program, arch, nr) == enosys, (hex(arch), nr)
        for nr in (0, 1, 59, 60, 202, 231, min(calls) - 1, max(calls) + 1):
            if nr not in calls:
                assert run_filter(program, arch, nr) == allow, (hex(arch), nr)
    assert run_filter(program, 0x12345678, 250) == allow
    assert seccomp.program("riscv64") is None
