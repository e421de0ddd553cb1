"""Run an untrusted bot process under bubblewrap (``bwrap``).

A bot is someone else's code. Inside the sandbox it sees the Python installation, this
project's packages and its own program read-only, a private tmpfs ``/tmp`` (its HOME is
in it), its own ``/proc`` in a new PID namespace (no other process of the machine), no
network at all except the match server's unix socket bound at ``SANDBOX_SERVER_SOCKET``
(a ``relay.ServerRelay`` forwards it to the server's TCP port), and resource limits. bwrap's
``--die-with-parent`` and the PID namespace make every descendant die with the sandbox:
when the namespace's first process exits the kernel kills the rest.

We use an existing sandbox rather than a home-made one: Debian's ``bubblewrap`` works
unprivileged (user namespaces) and as root.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cirulla.bots.cgroups import (
    DEFAULT_LIMITS,
    BotGroup,
    BotLimits,
    HostGroups,
    RunGroups,
    base_rlimits,
    describe_host,
    fallback_rlimits,
    parse_limits,
)
from cirulla.clients.matches.relay import ServerRelay

#: Where the match server's unix socket appears inside every sandbox.
SANDBOX_SERVER_SOCKET = Path("/run/cirulla/server.sock")
#: The private HOME of a sandboxed bot (inside its tmpfs /tmp).
SANDBOX_HOME = "/tmp/home"
#: System folders a program needs read-only (those missing on a machine are skipped).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Files of /etc a program may need (dynamic linker cache, locale, time zone, certificates).
ETC_PATHS = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/nsswitch.conf",
)
#: The project's packages a bot process imports (those not installed are skipped).
PACKAGES = ("cirulla", "cirulla.rules", "cirulla.bots", "cirulla.clients", "cirulla.env")
#: Install hint of the one-line refusal.
INSTALL_HINT = "install Debian's bubblewrap (apt-get install bubblewrap)"


#: A bot's resource limits (``cirulla.bots.cgroups``: memory, processes and CPU by its
#: control group, sized tmpfs folders, POSIX limits for the rest).
Limits = BotLimits
#: The size of the sandbox's /dev/shm and of its /run (which holds only the server's socket).
SHM_BYTES = 64 * 1024**2
RUN_BYTES = 1024**2


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot run here; the message is one line: what is missing, how to fix."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def available() -> str | None:
    """None if bubblewrap runs a process here, else the one-line reason it does not."""
    path = bwrap_path()
    if path is None:
        return f"--sandbox: bwrap not found; {INSTALL_HINT}"
    argv = [path, *_base_args(()), *READ_ONLY_TAIL, "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"--sandbox: bwrap cannot run ({exc})"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        detail = reason[-1] if reason else f"exit code {done.returncode}"
        return f"--sandbox: bwrap cannot create a sandbox here ({detail}); user namespaces off?"
    return None


def require() -> None:
    """Raise SandboxUnavailable (one line) unless bubblewrap runs here."""
    reason = available()
    if reason is not None:
        raise SandboxUnavailable(reason)


def python_paths() -> tuple[Path, ...]:
    """The Python installation and this project's packages (editable installs too)."""
    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).parent}
    for name in PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        # a namespace package's path also holds the editable finder's hook entry
        paths.update(Path(p) for p in getattr(module, "__path__", ()) if Path(p).is_absolute())
    return tuple(sorted(paths))


def _base_args(readable: Sequence[Path], limits: BotLimits = DEFAULT_LIMITS) -> list[str]:
    """Every tmpfs a bot can write is sized (its /tmp, /dev/shm, /run), and the sandbox's
    root and /dev are read-only: what it writes in files is bounded even without a
    memory group (where there is one, the files count against it too)."""
    args = [
        "--unshare-all",  # net, pid, ipc, uts, cgroup (and user where possible)
        "--die-with-parent",
        "--new-session",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(SHM_BYTES),
        "--tmpfs",
        "/dev/shm",
        "--size",
        str(limits.tmp_bytes),
        "--tmpfs",
        "/tmp",
        "--dir",
        SANDBOX_HOME,
        "--size",
        str(RUN_BYTES),
        "--tmpfs",
        "/run",
        "--chdir",
        "/tmp",
    ]
    for name in SYSTEM_PATHS + ETC_PATHS:
        if not os.path.lexists(name):
            continue
        if os.path.islink(name) and name in SYSTEM_PATHS:  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(name), name]
        else:
            args += ["--ro-bind", name, name]
    for extra in readable:
        args += ["--ro-bind-try", str(extra), str(extra)]
    return args


#: The last arguments before the command: the root and /dev read-only, once every mount
#: point in them has been made.
READ_ONLY_TAIL = ["--remount-ro", "/dev", "--remount-ro", "/"]


def _limiter(limits: BotLimits, grouped: bool) -> Callable[[], None]:
    """The POSIX limits of the sandbox's processes: CPU time, file size and no core
    files always; without a control group (``grouped`` False) also an address-space
    limit high enough for a JVM and the user's process count (``fallback_rlimits``)."""
    wanted = base_rlimits(limits) + ([] if grouped else fallback_rlimits(limits))

    def apply() -> None:
        for which, value in wanted:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (value, value))

    return apply


@dataclass(frozen=True)
class Sandbox:
    """How to run one bot process sandboxed (see the module docstring)."""

    limits: BotLimits = DEFAULT_LIMITS
    readable: tuple[Path, ...] = ()  # extra read-only paths (the bot program's own files)
    #: the control group the sandbox's processes join (None: POSIX limits only)
    group: BotGroup | None = None

    def wrap(
        self, argv: Sequence[str], env: Mapping[str, str], *, server_socket: Path | None
    ) -> tuple[list[str], dict[str, str], Callable[[], None] | None]:
        """The bwrap command line, its environment and a preexec_fn (its control group,
        rlimits) that together run ``argv`` sandboxed; CIRULLA_SERVER points at the
        server's socket."""
        path = bwrap_path()
        if path is None:
            raise SandboxUnavailable(f"--sandbox: bwrap not found; {INSTALL_HINT}")
        base = python_paths()
        # a path inside one already bound would need a mount point in a read-only tree
        extra = [Path(p).absolute() for p in self.readable]
        readable = (*base, *(p for p in extra if not any(p.is_relative_to(b) for b in base)))
        args = [path, *_base_args(readable, self.limits)]
        inner = dict(env)
        inner["HOME"] = SANDBOX_HOME
        inner["TMPDIR"] = "/tmp"
        if server_socket is not None:
            args += ["--dir", str(SANDBOX_SERVER_SOCKET.parent)]
            args += ["--bind", str(server_socket), str(SANDBOX_SERVER_SOCKET)]
            if "CIRULLA_SERVER" in inner:
                inner["CIRULLA_SERVER"] = f"unix:{SANDBOX_SERVER_SOCKET}"
        # bwrap hands its own environment to the sandbox: the bot's (allow-listed) one,
        # given to bwrap as its environment, never on its command line, where `ps` would
        # show the seat token to every local user
        args += [*READ_ONLY_TAIL, "--", *argv]
        limiter = _limiter(self.limits, self.group is not None)
        if self.group is None:
            return args, inner, limiter
        join = self.group.joiner()

        def preexec() -> None:
            join()  # first: a failure to join stops the start (no unlimited bot)
            limiter()

        return args, inner, preexec


def named_paths(argv: Sequence[str]) -> tuple[Path, ...]:
    """The files and folders a command line names (an argument, or the value of a
    ``--option=value``) that exist: a bot sees its own program and nothing else of the
    machine's files, so the organiser names what it needs on its command line."""
    found: list[Path] = []
    for arg in absolute_argv(argv):
        for candidate in (arg, arg.partition("=")[2]):
            if os.path.isabs(candidate) and os.path.exists(candidate) and candidate != "/":
                found.append(Path(candidate))
    return tuple(dict.fromkeys(found))


def _absolute(candidate: str) -> str | None:
    """``candidate`` as an absolute path if it names an existing file by a relative path
    (``agent.npz``, ``bots/mine.py``), else None: inside the sandbox the working folder
    is its private /tmp, so a relative path would name nothing there."""
    if not candidate or os.path.isabs(candidate) or not os.path.isfile(candidate):
        return None
    if "/" not in candidate and not Path(candidate).suffix:
        return None  # a bare word ("random") is a name, not a path
    return str(Path(candidate).absolute())


def absolute_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with every relative file path (an argument, or a ``key=value``'s value)
    made absolute, so the sandboxed process finds the files bound for it."""
    out = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        whole = _absolute(arg)
        if whole is not None:
            out.append(whole)
        elif sep and (found := _absolute(value)) is not None:
            out.append(f"{key}={found}")
        else:
            out.append(arg)
    return out


@dataclass
class Wrapped:
    """One bot process as its confinement starts it: the command line, its environment,
    the preexec_fn, and the control group it joins (its owner closes it)."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None] | None
    group: BotGroup | None


@dataclass
class Confinement:
    """How a runner's bots run when they are untrusted: each process in a ``Sandbox``
    that sees its own command's files, reaching the match server only through
    ``relay`` (the one socket it is given), each process tree in a control group of its
    own under ``groups`` (None where the host gives none: POSIX limits only)."""

    relay: ServerRelay
    limits: BotLimits = DEFAULT_LIMITS
    #: Folders never bound into a sandbox, even when a command line names them (or a
    #: folder around them): the runner's output, the ladder's data.
    private: tuple[Path, ...] = ()
    #: This run's control groups (``cirulla.bots.cgroups.run_groups``).
    groups: RunGroups | None = None

    #: The match server's address as a sandboxed bot must dial it.
    server_address = f"unix:{SANDBOX_SERVER_SOCKET}"

    def open_groups(self, base: str | None = None) -> str:
        """Make this run's control groups (``cirulla.bots.cgroups``) where the host gives
        them; the one line to say at start, either way (what bounds each bot)."""
        host = HostGroups.detect(base)
        if not isinstance(host, str):
            try:
                self.groups = host.new_run()
            except OSError as exc:
                host = f"control groups: cannot make a group under {host.bases['memory']} ({exc})"
        return describe_host(host)

    def close_groups(self) -> None:
        """Kill what is left in this run's groups and remove them."""
        if self.groups is not None:
            self.groups.close()
            self.groups = None

    def limits_for(self, text: str | None) -> BotLimits:
        """A bot's own limits (``parse_limits`` form) over the defaults."""
        return parse_limits(text, self.limits) if text else self.limits

    def wrap(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        bot: str = "bot",
        limits: BotLimits | None = None,
    ) -> Wrapped:
        """How to start ``argv`` for ``bot`` under ``limits`` (default: the
        confinement's): its group is made here, with the limits set, before it starts."""
        limits = limits or self.limits
        private = [p.absolute() for p in self.private]
        argv = absolute_argv(argv)
        named = tuple(
            path
            for path in named_paths(argv)
            if not any(path.is_relative_to(q) or q.is_relative_to(path) for q in private)
        )
        group = self.groups.bot(bot, limits) if self.groups is not None else None
        sandbox = Sandbox(limits, named, group)
        args, inner, preexec = sandbox.wrap(argv, env, server_socket=self.relay.socket_path)
        return Wrapped(args, inner, preexec, group)

