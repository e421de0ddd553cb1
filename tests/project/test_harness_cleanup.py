"""The tests' own processes do not outlive an interrupted run: a program started with
``tied_to_this_process`` gets SIGTERM when its starter dies, even by SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.server_harness import server_command

# A stand-in for pytest: starts a long sleeper tied to itself, says its pid, waits.
STARTER = """
import subprocess, sys
from tests.server_harness import tied_to_this_process
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
child = subprocess.Popen(tied_to_this_process(sleeper))
print(child.pid, flush=True)
child.wait()
"""


SLEEPER_ARGS = [b"-c", b"import time; time.sleep(600)"]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_tied_process_dies_with_its_starter() -> None:
    root = Path(__file__).resolve().parents[2]
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER], stdout=subprocess.PIPE, text=True, cwd=root
    )
    try:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline())
        # setpriv sets the parent-death signal, then execs the sleeper in its place. Wait
        # for the sleeper's exact argv: setpriv's own command line (and the forked
        # starter's) also hold the sleeper's code, and killing the starter before setpriv
        # has set the signal would leave the sleeper untied.
        deadline = time.monotonic() + 30
        while alive(pid) and cmdline(pid).split(b"\0")[1:3] != SLEEPER_ARGS:
            assert time.monotonic() < deadline, cmdline(pid)
            time.sleep(0.05)
        assert alive(pid)
        os.kill(starter.pid, signal.SIGKILL)
        starter.wait(10)
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), "the tied process outlived its starter"
    finally:
        if starter.poll() is None:
            starter.kill()


def test_a_server_command_names_this_process_as_its_parent() -> None:
    argv = server_command("--listen", "127.0.0.1:0")
    assert argv[argv.index("--parent-pid") + 1] == str(os.getpid())
