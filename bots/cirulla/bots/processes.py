"""Process plumbing every area that starts processes shares: Linux ``prctl`` for tying a
child to its parent or adopting orphans, and how to start a local ``cirulla server``.

It lives on the bots' floor (the base install) because the text bridge needs it as much
as the tournament runner, the ladder and ``cirulla bot check`` do, and none of those may
import another's area (docs/layout.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

#: prctl options (linux/prctl.h).
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def prctl_function() -> Callable[..., int] | None:
    """libc's prctl, resolved now (never between fork and exec: another thread of the
    parent may hold the import lock there), or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    return function


def prctl(option: int, value: int) -> bool:
    """One ``prctl(option, value)`` call in this process; True if it took effect."""
    function = prctl_function()
    return function is not None and int(function(option, value, 0, 0, 0)) == 0


def die_with_parent() -> Callable[[], None]:
    """A preexec_fn: the child gets SIGKILL when the thread that started it exits, even
    by SIGKILL of the parent (Linux PR_SET_PDEATHSIG; elsewhere a no-op). Start children
    that should outlive one game from a thread that lives as long as the run."""
    parent = os.getpid()
    function = prctl_function()
    if function is None:
        return lambda: None

    def tie() -> None:
        function(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: do not run at all
            os._exit(1)

    return tie


def cirulla_command() -> list[str]:
    """How to run this installation's ``cirulla`` without relying on PATH."""
    return [sys.executable, "-m", "cirulla"]


def server_argv(port_file: Path, db: Path, bot_socket: Path | None = None) -> list[str]:
    """A ``cirulla server`` on a free loopback port that writes the port to ``port_file``
    once it serves, and stops by itself if this process dies (even by SIGKILL); with
    ``bot_socket``, also serving sandboxed bots Play only there (``--bot-socket``)."""
    return [
        *cirulla_command(),
        "server",
        "--listen",
        "127.0.0.1:0",
        "--port-file",
        str(port_file),
        "--db",
        str(db),
        "--parent-pid",
        str(os.getpid()),
        *(["--bot-socket", str(bot_socket)] if bot_socket is not None else []),
    ]


def read_port(port_file: Path) -> int | None:
    """The port a starting server wrote, or None while it has not."""
    text = port_file.read_text().strip() if port_file.exists() else ""
    return int(text) if text.isdigit() else None


@contextlib.contextmanager
def local_server(timeout: float = 30.0) -> Iterator[str]:
    """A throwaway ``cirulla server`` in a temporary folder, for as long as the block
    runs; yields its address. The tournament runner supervises its own server (with logs
    kept in its output folder); this is for tools that only need one to talk to."""
    with tempfile.TemporaryDirectory(prefix="cirulla-server-") as tmp:
        folder = Path(tmp)
        port_file = folder / "server.port"
        with (folder / "server.log").open("wb") as log:
            child = subprocess.Popen(
                server_argv(port_file, folder / "server.sqlite3"),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent(),
            )
            try:
                yield f"127.0.0.1:{_wait_for_port(child, port_file, folder, timeout)}"
            finally:
                child.terminate()
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()


def _wait_for_port(
    child: subprocess.Popen[bytes], port_file: Path, folder: Path, timeout: float
) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        port = read_port(port_file)
        if port is not None:
            return port
        if child.poll() is not None:
            tail = (folder / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the match server exited with code {child.returncode}: {tail}")
        time.sleep(0.01)
    raise RuntimeError(f"the match server was not ready after {timeout:.0f}s")
