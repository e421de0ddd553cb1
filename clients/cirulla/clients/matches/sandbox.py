"""Run an untrusted bot process under bubblewrap (``bwrap``).

A bot is someone else's code. Inside the sandbox it sees read-only what it needs to run
and nothing else of the machine (``binds``: the system's programs and libraries, the
Python installation, this project's packages, its own program's folder and the files its
command line names, each checked against the runner's private paths), a private tmpfs
``/tmp`` (its HOME is in it), its own ``/proc`` in a new PID namespace (no other process
of the machine), no network at all except its own endpoint of the match server's relay,
a unix socket bound at ``SANDBOX_SERVER_SOCKET`` (``relay.ServerRelay`` forwards it,
within bounds per bot, to the match server's bot socket, which serves Play only), and
resource limits. bwrap's ``--die-with-parent`` and the PID namespace make every
descendant die with the sandbox: when the namespace's first process exits the kernel
kills the rest.

We use an existing sandbox rather than a home-made one: Debian's ``bubblewrap`` works
unprivileged (user namespaces) and as root.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
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
from cirulla.clients.matches import binds, seccomp
from cirulla.clients.matches.binds import Bind
from cirulla.clients.matches.relay import Endpoint, ServerRelay

#: Where the match server's unix socket appears inside every sandbox.
SANDBOX_SERVER_SOCKET = Path("/run/cirulla/server.sock")
#: The private HOME of a sandboxed bot (inside its tmpfs /tmp).
SANDBOX_HOME = "/tmp/home"
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


def _base_args(
    readable: Sequence[Bind], limits: BotLimits = DEFAULT_LIMITS, private: Sequence[Path] = ()
) -> list[str]:
    """Every tmpfs a bot can write is sized (its /tmp, /dev/shm, /run), and the sandbox's
    root and /dev are read-only: what it writes in files is bounded even without a
    memory group (where there is one, the files count against it too). The read-only
    binds are ``binds.bwrap_args``: the installation and ``readable``, each checked
    against ``private``."""
    args = [
        "--unshare-all",  # net, pid, ipc, uts, cgroup (and user where possible)
        *binds.no_privilege(bwrap_path()),
        "--die-with-parent",
        "--new-session",
        "--proc",
        "/proc",
        *binds.PROC_READ_ONLY,
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
    try:
        return args + binds.bwrap_args(readable, private)
    except binds.BindRefused as exc:
        raise SandboxUnavailable(str(exc)) from None


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
    #: Extra read-only paths (the bot program's own files), each checked like the rest.
    readable: tuple[Path | Bind, ...] = ()
    #: the control group the sandbox's processes join (None: POSIX limits only)
    group: BotGroup | None = None
    #: Paths no bound path may show (``binds``): the runner's data, secrets, output.
    private: tuple[Path, ...] = ()
    #: A file descriptor holding the seccomp filter (``seccomp.filter_fd``), which the
    #: caller passes to bwrap (``pass_fds``); None: no filter.
    seccomp_fd: int | None = None

    def wrap(
        self, argv: Sequence[str], env: Mapping[str, str], *, server_socket: Path | None
    ) -> tuple[list[str], dict[str, str], Callable[[], None] | None]:
        """The bwrap command line, its environment and a preexec_fn (its control group,
        rlimits) that together run ``argv`` sandboxed; CIRULLA_SERVER points at the
        server's socket. SandboxUnavailable (one line) when bwrap is missing or the
        installation cannot be bound without showing a private path."""
        path = bwrap_path()
        if path is None:
            raise SandboxUnavailable(f"--sandbox: bwrap not found; {INSTALL_HINT}")
        extra = [
            p if isinstance(p, Bind) else Bind(binds.real(p), os.path.abspath(p))
            for p in self.readable
        ]
        args = [path, *_base_args(extra, self.limits, self.private)]
        inner = dict(env)
        inner["HOME"] = SANDBOX_HOME
        inner["TMPDIR"] = "/tmp"
        if server_socket is not None:
            args += ["--dir", str(SANDBOX_SERVER_SOCKET.parent)]
            args += ["--bind", str(server_socket), str(SANDBOX_SERVER_SOCKET)]
            if "CIRULLA_SERVER" in inner:
                inner["CIRULLA_SERVER"] = f"unix:{SANDBOX_SERVER_SOCKET}"
        if self.seccomp_fd is not None:
            args += ["--seccomp", str(self.seccomp_fd)]
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


def check_installation(private: Sequence[Path]) -> None:
    """SandboxUnavailable (one line) unless the installation bots run from can be bound
    without showing one of ``private`` (it is one of them: ``--data`` naming the venv).
    A runner calls it before it writes or narrows anything there."""
    try:
        binds.bwrap_args((), private)
    except binds.BindRefused as exc:
        raise SandboxUnavailable(str(exc)) from None


@dataclass
class Wrapped:
    """One bot process as its confinement starts it: the command line, its environment,
    the preexec_fn, the control group it joins (its owner closes it) and its own relay
    endpoint: ``started(pid)`` once it runs (the endpoint then closes when the process
    exits), ``abandon()`` if it could not start."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None] | None
    group: BotGroup | None
    endpoint: Endpoint
    #: What the child must be given (``Popen(pass_fds=...)``): the seccomp filter's
    #: file descriptor, closed here once the child started (or could not).
    pass_fds: tuple[int, ...] = ()

    def started(self, pid: int) -> None:
        self._close_fds()
        self.endpoint.watch(pid)

    def abandon(self) -> None:
        self._close_fds()
        self.endpoint.close()

    def _close_fds(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()


@dataclass
class Confinement:
    """How a runner's bots run when they are untrusted: each process in a ``Sandbox``
    that sees its own command's files (``binds.bot_binds``), reaching the match server
    only through an endpoint of ``relay`` of its own, each process tree in a control
    group of its own under ``groups`` (None where the host gives none: POSIX limits
    only)."""

    relay: ServerRelay
    limits: BotLimits = DEFAULT_LIMITS
    #: Paths never shown to a sandbox, even when a command line names them (or a folder
    #: around them): the runner's output, the ladder's data, databases, token, TLS key.
    private: tuple[Path, ...] = ()
    #: This run's control groups (``cirulla.bots.cgroups.run_groups``).
    groups: RunGroups | None = None

    #: The match server's address as a sandboxed bot must dial it.
    server_address = f"unix:{SANDBOX_SERVER_SOCKET}"

    def check(self) -> None:
        """SandboxUnavailable (one line) unless the installation can be bound without a
        private path (``check_installation``)."""
        check_installation(self.private)

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
        argv = binds.absolute_argv(argv)
        readable = tuple(binds.bot_binds(argv, self.private))
        group = self.groups.bot(bot, limits) if self.groups is not None else None
        endpoint = self.relay.endpoint()
        filter_fd: int | None = None
        try:
            filter_fd = seccomp.filter_fd()
            sandbox = Sandbox(limits, readable, group, self.private, filter_fd)
            args, inner, preexec = sandbox.wrap(argv, env, server_socket=endpoint.path)
        except BaseException:
            if filter_fd is not None:
                os.close(filter_fd)
            endpoint.close()
            if group is not None:
                group.close()
            raise
        fds = () if filter_fd is None else (filter_fd,)
        return Wrapped(args, inner, preexec, group, endpoint, fds)
