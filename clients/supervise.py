"""Child processes of a tournament: the local match server and one process per bot seat.

Every child runs in its own session (process group), so stopping it also stops whatever
it started (an engine's helpers, an MCTS bot's workers); a polite SIGTERM comes first and
SIGKILL follows after a short grace. Bot output (stdout and stderr) goes to a log file,
never to the tournament's terminal, because a bot may print what its seat sees.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

#: Prefix of a bot spec that is a command line rather than a built-in kind.
COMMAND_PREFIX = "cmd:"

#: Placeholders a command spec may use; each is replaced inside every argument. The same
#: values are also in the environment as CIRULLA_SERVER, CIRULLA_MATCH, ... (an engine
#: may prefer reading its token from there: arguments are visible to other local users).
PLACEHOLDERS = ("server", "match", "token", "seat", "name", "seed")

#: Seconds between SIGTERM and SIGKILL when stopping a child.
KILL_GRACE = 3.0


def cirulla_command() -> list[str]:
    """How to run this installation's ``cirulla`` without relying on PATH."""
    return [sys.executable, "-m", "cirulla"]


def is_command_spec(spec: str) -> bool:
    return spec.startswith(COMMAND_PREFIX)


def validate_spec(spec: str) -> None:
    """Fail early (before any game) on a bot spec that could never start."""
    if is_command_spec(spec):
        args = shlex.split(spec[len(COMMAND_PREFIX) :])
        if not args:
            raise ValueError(f"bot spec {spec!r}: the command after 'cmd:' is empty")
        return
    from cirulla.bots import parse_bot_spec

    parse_bot_spec(spec)


def seat_values(
    *, server: str, match: str, token: str, seat: int, name: str, seed: int
) -> dict[str, str]:
    return {
        "server": server,
        "match": match,
        "token": token,
        "seat": str(seat),
        "name": name,
        "seed": str(seed),
    }


def seat_env(values: dict[str, str]) -> dict[str, str]:
    """The parent's environment plus CIRULLA_SERVER, CIRULLA_MATCH, CIRULLA_TOKEN, ..."""
    env = dict(os.environ)
    env.update({f"CIRULLA_{key.upper()}": value for key, value in values.items()})
    return env


def bot_argv(spec: str, values: dict[str, str]) -> list[str]:
    """The command line that plays one seat: a built-in kind or an external command."""
    if is_command_spec(spec):
        argv = []
        for arg in shlex.split(spec[len(COMMAND_PREFIX) :]):
            for key, value in values.items():
                arg = arg.replace("{" + key + "}", value)
            argv.append(arg)
        return argv
    from cirulla.bots import bot_command

    args = bot_command(
        spec,
        values["server"],
        values["match"],
        values["token"],
        name=values["name"],
        seed=int(values["seed"]),
    )
    return cirulla_command() + _attach_dash_values(args)


def _attach_dash_values(args: list[str]) -> list[str]:
    """``["--token", "-x"]`` -> ``["--token=-x"]``: argparse would read ``-x`` as an option
    (server tokens are URL-safe base64 and may start with a dash)."""
    out: list[str] = []
    for arg in args:
        if out and arg.startswith("-") and out[-1] in _VALUE_OPTIONS:
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


#: Options of ``cirulla bot`` that take a value (which may start with a dash).
_VALUE_OPTIONS = ("--server", "--match", "--token", "--name", "--seed", "--option")


class Child:
    """One supervised process in its own process group."""

    def __init__(self, argv: Sequence[str], log_path: Path, env: dict[str, str] | None = None):
        self.argv = list(argv)
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = log_path.open("ab")
        self.started = time.monotonic()
        self.exited_at: float | None = None
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        except OSError as exc:
            self._log.write(f"cannot start {shlex.join(self.argv)}: {exc}\n".encode())
            self._log.close()
            raise
        LIVE.add(self)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        code = self.proc.poll()
        if code is not None and self.exited_at is None:
            self.exited_at = time.monotonic()
        return code

    def wait(self, timeout: float) -> int | None:
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.poll()

    def stop(self, grace: float = KILL_GRACE) -> int | None:
        """SIGTERM the group, then SIGKILL it after ``grace`` seconds; returns the exit code."""
        if self.poll() is None:
            self._signal(signal.SIGTERM)
            if self.wait(grace) is None:
                self._signal(signal.SIGKILL)
                self.wait(grace)
        else:
            # the leader is gone; reap anything it left behind in its group
            self._signal(signal.SIGKILL)
        LIVE.discard(self)
        if not self._log.closed:
            self._log.close()
        return self.proc.returncode

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)


class _LiveSet:
    """Every child not yet stopped, so Ctrl-C or a crash of the runner can stop them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._children: set[Child] = set()

    def add(self, child: Child) -> None:
        with self._lock:
            self._children.add(child)

    def discard(self, child: Child) -> None:
        with self._lock:
            self._children.discard(child)

    def stop_all(self) -> None:
        with self._lock:
            children = list(self._children)
        for child in children:
            child.stop(grace=1.0)


LIVE = _LiveSet()


class LocalServer:
    """A ``cirulla server`` subprocess on a free local port, for one tournament."""

    def __init__(self, db: Path, log_path: Path, admin_token: str | None = None):
        self.db = db
        self.log_path = log_path
        self.admin_token = admin_token
        self.port_file = log_path.with_name("server.port")
        self.child: Child | None = None
        self.address = ""

    def start(self, timeout: float = 30.0) -> str:
        self.port_file.unlink(missing_ok=True)
        argv = [
            *cirulla_command(),
            "server",
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(self.port_file),
            "--db",
            str(self.db),
            # the server stops by itself if this runner dies (even by SIGKILL)
            "--parent-pid",
            str(os.getpid()),
        ]
        env = dict(os.environ)
        env.pop("CIRULLA_ADMIN_TOKEN", None)
        if self.admin_token:  # in the environment, not on the command line (`ps`)
            env["CIRULLA_ADMIN_TOKEN"] = self.admin_token
        self.child = Child(argv, self.log_path, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.port_file.read_text().strip() if self.port_file.exists() else ""
            if text.isdigit():
                self.address = f"127.0.0.1:{int(text)}"
                return self.address
            code = self.child.poll()
            if code is not None:
                raise RuntimeError(
                    f"the match server exited with code {code} before it was ready; "
                    f"see {self.log_path}"
                )
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"the match server was not ready after {timeout:.0f}s; see {self.log_path}"
        )

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None
        self.port_file.unlink(missing_ok=True)

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
