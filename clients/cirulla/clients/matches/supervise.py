"""Child processes of a tournament: the local match server and the bots.

A bot that can play match after match (a built-in kind, a ``text:`` engine, or a
``serve:`` command speaking the stdin protocol of ``cirulla.bots.loop``) is a
``ServedBot``: started once, kept in a ``BotPool`` between games and restarted only
after a crash or a hang. A ``cmd:`` bot is a
``Child`` started for one seat of one game.

Every child runs in its own session (process group), so stopping it also stops whatever
it started (an engine's helpers, an MCTS bot's workers); a polite SIGTERM comes first and
SIGKILL follows after a short grace. Bot output (stdout and stderr) goes to a log file,
never to the tournament's terminal, because a bot may print what its seat sees.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cirulla.bots.cgroups import BotGroup, BotLimits, CpuDemand, Throttling, format_bytes
from cirulla.bots.processes import die_with_parent, read_port, server_argv
from cirulla.clients.matches.sandbox import Confinement, Wrapped
from cirulla.clients.matches.seat_argv import program_env
from cirulla.programs import start_hint

#: Seconds between SIGTERM and SIGKILL when stopping a child.
KILL_GRACE = 3.0
#: Seconds a kept-alive bot may take to start and say it is ready.
READY_TIMEOUT = 60.0
#: The longest piece of a kept-alive bot's stdout read at once (a line, or part of one).
LINE_BYTES = 64 * 1024


def _spawn(
    argv: list[str],
    log: IO[bytes],
    env: dict[str, str] | None,
    tied: bool = False,
    confinement: Confinement | None = None,
    bot: str = "bot",
    limits: BotLimits | None = None,
    **streams: Any,
) -> tuple[subprocess.Popen[bytes], BotGroup | None]:
    """Start a child in its own session; a command that cannot start says so in its log.
    ``tied``: it dies with the runner (``die_with_parent``); ``confinement``: it runs
    sandboxed (``cirulla.clients.matches.sandbox``), in a control group of its own under
    ``limits`` (rlimits and the group joined before bwrap starts); the group is returned."""
    steps: list[Callable[[], None]] = [die_with_parent()] if tied else []
    group: BotGroup | None = None
    wrapped: Wrapped | None = None
    if confinement is not None:
        wrapped = confinement.wrap(
            argv, env if env is not None else program_env(), bot=bot, limits=limits
        )
        argv, env, group = wrapped.argv, wrapped.env, wrapped.group
        if wrapped.preexec is not None:
            steps.append(wrapped.preexec)
        streams["pass_fds"] = wrapped.pass_fds  # its seccomp filter, for bwrap

    def preexec() -> None:
        for step in steps:
            step()

    try:
        proc = subprocess.Popen(
            argv, start_new_session=True, env=env, preexec_fn=preexec if steps else None, **streams
        )
    except (OSError, subprocess.SubprocessError) as exc:
        hint = start_hint(argv[0], exc)
        log.write(f"cannot start {shlex.join(argv)}: {exc}{hint}\n".encode())
        log.close()
        if wrapped is not None:
            wrapped.abandon()
        if group is not None:
            group.close()
        raise OSError(f"cannot start {argv[0]}: {exc}{hint}") from exc
    if wrapped is not None:
        wrapped.started(proc.pid)  # its relay endpoint closes when it exits
    return proc, group


class _GroupProcess:
    """What ``Child`` and ``ServedBot`` share: a command, the log it appends to (opened
    before the process starts, so a failed start is logged there too), a process group
    of its own, signalled as a whole, and under confinement a control group of its own
    (``group``), whose hard limits stop the whole tree (``check_limits``)."""

    proc: subprocess.Popen[bytes]
    group: BotGroup | None = None
    limits: BotLimits = BotLimits()
    #: the limit that stopped it (None while none did)
    limit: str | None = None
    #: its group's CPU throttling when its current game began (``mark_throttle``), and
    #: the last reading (kept once the group is gone)
    _throttle_base: Throttling = Throttling()
    _throttle_last: Throttling = Throttling()
    #: CPU its threads wanted (``CpuDemand``, sampled with ``check_limits``): the total
    #: and the time when its game began, and when it was last sampled
    _demand: CpuDemand | None = None
    _demand_base: float = 0.0
    _game_start: float = 0.0
    _sampled_at: float = 0.0

    def __init__(self, argv: Sequence[str], log_path: Path) -> None:
        self.argv = list(argv)
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = log_path.open("ab")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _signal(self, sig: int) -> None:
        _killpg(self.proc.pid, sig)

    def stop_for(self, limit: str) -> None:
        """Stop the whole tree now because it ran into ``limit`` (said in its log)."""
        if self.limit is None:
            self.limit = limit
            self._write_note(f"cirulla: killed: {limit}\n")
        self._signal(signal.SIGKILL)
        if self.group is not None:
            self.group.kill()

    def check_limits(self) -> str | None:
        """The hard limit it ran into (memory, processes, its log's size), stopping it
        if it did."""
        self._sample_demand()
        if self.limit is None and self.group is not None:
            hit = self.group.limit_hit()
            if hit is None and self._log_size() >= self.limits.file_bytes:
                # it writes its log itself; Python, for one, ignores SIGXFSZ
                hit = f"output limit {format_bytes(self.limits.file_bytes)}"
            if hit is not None:
                self.stop_for(hit)
        return self.limit

    def _log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def killed_by(self) -> str | None:
        """``killed: memory limit 2 GiB`` (or CPU time, output, ...) once it exited
        because of a limit; None otherwise."""
        limit = self.check_limits()
        code = self.proc.returncode
        if limit is None and code is not None and code < 0:
            if -code == signal.SIGXCPU:
                limit = f"CPU time limit {self.limits.cpu_seconds} s"
            elif -code == signal.SIGXFSZ:
                limit = f"file size limit {format_bytes(self.limits.file_bytes)}"
        return f"killed: {limit}" if limit else None

    def throttling(self) -> Throttling:
        """Its group's CPU throttling in all (cpu.stat); the last reading once the group
        is closed."""
        if self.group is not None and not self._group_closed:
            now = self.group.cpu_throttling()
            if now.periods >= self._throttle_last.periods:
                self._throttle_last = now
        return self._throttle_last

    def _sample_demand(self) -> None:
        """Add what its threads wanted since the last sample (while its group is open)."""
        if self.group is None or self._group_closed:
            return
        if self._demand is None:
            self._demand = CpuDemand()
            self._game_start = time.monotonic()
        self._demand.sample(self.group)
        self._sampled_at = time.monotonic()

    def mark_throttle(self) -> None:
        """A game of its begins: ``throttled_by`` counts from here."""
        self._throttle_base = self.throttling()
        self._sample_demand()
        self._demand_base = self._demand.seconds if self._demand is not None else 0.0
        self._game_start = time.monotonic()

    def throttled_by(self) -> str | None:
        """``throttled: cpu limit 1 core (its threads wanted 4.8 cores, ...)`` when its
        CPU quota held it back in its game, else None: the kernel throttled it
        (``Throttling.held_back``), or its threads wanted at least half a core more than
        its quota for a second or more (``CpuDemand``; on a busy machine the others'
        share keeps it below its quota before the quota does). Not a fault: a bot that
        wants every core gets its quota and plays on, slower; if its moves then overrun
        its clock it forfeits on the clock, and this says why."""
        if self.group is None or self.limits.cpu <= 0:
            return None
        self._sample_demand()
        game = self.throttling() - self._throttle_base
        wall = self._sampled_at - self._game_start
        wanted = 0.0
        if self._demand is not None and wall >= 1.0:
            wanted = (self._demand.seconds - self._demand_base) / wall
        if not game.held_back() and wanted < self.limits.cpu + 0.5:
            return None
        cores = f"{self.limits.cpu:g} core" + ("" if self.limits.cpu == 1 else "s")
        share = 100 * game.throttled // max(game.periods, 1)
        return (
            f"throttled: cpu limit {cores} (its threads wanted {wanted:.1f} cores; "
            f"{game.seconds:.1f} s throttled, in {share}% of its periods)"
        )

    def _write_note(self, text: str) -> None:
        with contextlib.suppress(ValueError, OSError):
            self._log.write(text.encode())
            self._log.flush()

    _group_closed = False

    def _close_group(self) -> None:
        self.check_limits()
        if self.group is not None and not self._group_closed:
            self.throttling()  # its last reading, before the group is gone
            self._group_closed = True
            self.group.close()


class Child(_GroupProcess):
    """One supervised process in its own process group."""

    def __init__(
        self,
        argv: Sequence[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        tied: bool = False,
        confinement: Confinement | None = None,
        bot: str = "bot",
        limits: BotLimits | None = None,
    ):
        super().__init__(argv, log_path)
        self.started = time.monotonic()
        self.exited_at: float | None = None
        self.limits = limits or (confinement.limits if confinement is not None else BotLimits())
        self.proc, self.group = _spawn(
            self.argv,
            self._log,
            env,
            tied,
            confinement,
            bot,
            self.limits,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        LIVE.add(self)

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
        self._close_group()
        LIVE.discard(self)
        if not self._log.closed:
            self._log.close()
        return self.proc.returncode


@dataclass
class Ticket:
    """One match handed to a ``ServedBot``: set ``done`` when it reports leaving the match
    (``code`` 0, or 1 and ``error``) or when the process exits (``exited``, its code)."""

    match: str
    wake: threading.Event | None = None
    done: threading.Event = field(default_factory=threading.Event)
    code: int | None = None
    error: str | None = None
    exited: bool = False

    def finish(self, code: int | None, error: str | None = None, exited: bool = False) -> None:
        if self.done.is_set():
            return
        self.code, self.error, self.exited = code, error, exited
        self.done.set()
        if self.wake is not None:
            self.wake.set()


class ServedBot(_GroupProcess):
    """A long-lived bot process: assignments go to its stdin, done lines come back on its
    stdout (protocol in ``cirulla.bots.loop``); its stderr and any other output go to its
    log. Runs in its own process group, like a ``Child``."""

    def __init__(
        self,
        argv: Sequence[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        tied: bool = False,
        confinement: Confinement | None = None,
        bot: str = "bot",
        limits: BotLimits | None = None,
    ):
        super().__init__(argv, log_path)
        self._lock = threading.Lock()
        self.limits = limits or (confinement.limits if confinement is not None else BotLimits())
        #: bytes of output written to its log (bounded by ``limits.output_bytes``)
        self.output = 0
        self._ticket: Ticket | None = None
        self.matches = 0
        #: When it was last given back to its pool (``BotPool.stop_idle``).
        self.idle_since = time.monotonic()
        #: the deal groups (duplicate twins) this process has played a game of: it never
        #: plays another game of one (it could remember its hands, an opponent's there)
        self.deal_groups: set[str] = set()
        #: Set when the bot said it is ready for matches (or exited: check ``alive``).
        self.ready = threading.Event()
        self.proc, self.group = _spawn(
            self.argv,
            self._log,
            env,
            tied,
            confinement,
            bot,
            self.limits,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        LIVE.add(self)
        self._reader = threading.Thread(target=self._read, name="bot-stdout", daemon=True)
        self._reader.start()

    def poll(self) -> int | None:
        return self.proc.poll()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def assign(self, values: dict[str, str], wake: threading.Event | None = None) -> Ticket:
        """Hand the bot its next match (``seat_values``); the ticket says when it is done."""
        ticket = Ticket(values["match"], wake)
        line = {
            "server": values["server"],
            "match": values["match"],
            "token": values["token"],
            "seat": int(values["seat"]),
            "name": values["name"],
            "seed": int(values["seed"]),
        }
        with self._lock:
            self._ticket = ticket
            self.matches += 1
        self.mark_throttle()
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(line, separators=(",", ":")) + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):
            ticket.finish(self.proc.wait(), "the bot process has exited", exited=True)
        return ticket

    def _read(self) -> None:
        assert self.proc.stdout is not None
        # lines read up to LINE_BYTES at a time: a flood without a newline is never held whole
        for raw in iter(lambda: self.proc.stdout.readline(LINE_BYTES), b""):  # type: ignore[union-attr]
            message = _control_message(raw)
            if message is None:
                self._write_log(raw)
                continue
            if "ready" in message:
                self.ready.set()
                continue
            with self._lock:
                ticket = self._ticket
            if ticket is not None and message.get("done") == ticket.match:
                code = message.get("code")
                ticket.finish(code if isinstance(code, int) else 1, message.get("error"))
            else:
                self._write_log(raw)
        code = self.proc.wait()
        self.ready.set()
        with self._lock:
            ticket = self._ticket
        if ticket is not None:
            ticket.finish(code, f"the bot process exited with code {code}", exited=True)

    def _write_log(self, raw: bytes) -> None:
        """Its output to its log, up to ``limits.output_bytes``: a bot that prints more
        is stopped (``killed: output limit``), never read on at the ladder's expense."""
        self.output += len(raw)
        if self.limit is not None:
            return
        if self.output > self.limits.output_bytes:
            self.stop_for(f"output limit {format_bytes(self.limits.output_bytes)}")
            return
        with contextlib.suppress(ValueError, OSError):
            self._log.write(raw)
            self._log.flush()

    def stop(self, grace: float = KILL_GRACE) -> int | None:
        """Close its stdin (a polite bot exits), then SIGTERM and SIGKILL its group."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()
        if self.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)
        if self.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(grace)
        else:
            self._signal(signal.SIGKILL)
        self._close_group()
        LIVE.discard(self)
        self._reader.join(1.0)
        with self._lock:
            if not self._log.closed:
                self._log.close()
        return self.proc.returncode


def _control_message(raw: bytes) -> dict[str, Any] | None:
    """A done line of the stdin protocol, or None for anything else the bot printed."""
    if not raw.startswith(b"{"):
        return None
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    if isinstance(message, dict) and ("done" in message or "ready" in message):
        return message
    return None


def _killpg(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


class _LiveSet:
    """Every child not yet stopped, so Ctrl-C or a crash of the runner can stop them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._children: set[Child | ServedBot] = set()

    def add(self, child: Child | ServedBot) -> None:
        with self._lock:
            self._children.add(child)

    def discard(self, child: Child | ServedBot) -> None:
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

    def __init__(
        self,
        db: Path,
        log_path: Path,
        admin_token: str | None = None,
        bot_socket: Path | None = None,
    ):
        self.db = db
        self.log_path = log_path
        self.admin_token = admin_token
        #: where sandboxed bots are served Play only (``cirulla server --bot-socket``)
        self.bot_socket = bot_socket
        self.port_file = log_path.with_name("server.port")
        self.child: Child | None = None
        self.address = ""

    def start(self, timeout: float = 30.0) -> str:
        self.port_file.unlink(missing_ok=True)
        argv = server_argv(self.port_file, self.db, self.bot_socket)
        # the server is trusted (it gets its admin token) but not the operator's secrets
        env = program_env()
        if self.admin_token:  # in the environment, not on the command line (`ps`)
            env["CIRULLA_ADMIN_TOKEN"] = self.admin_token
        self.child = Child(argv, self.log_path, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            port = read_port(self.port_file)
            if port is not None:
                self.address = f"127.0.0.1:{port}"
                return self.address
            code = self.child.poll()
            if code is not None:
                raise RuntimeError(
                    f"the match server exited with code {code} before it was ready; "
                    f"see {self.log_path}"
                )
            time.sleep(0.01)  # the first game waits for this: poll often (a stat a time)
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
