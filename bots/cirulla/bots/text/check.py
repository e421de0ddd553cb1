"""``cirulla bot check SPEC``: play a few short games with an engine against random and
report every protocol violation with the offending exchange (like fastchess's
``--compliance``).

A real local server is started (``cirulla server`` on a free port, a temporary
database); the engine plays through the same bridge as ``cirulla bot text``, in 2-, 3- and
4-player matches and in different seats, against the built-in random bot. Besides what
the bridge notices in play (bad answers, missing ids, refused commands, no answer in
time), the check probes the admin commands: an unknown command must get ``?`` and
``known_command`` of an unknown name ``false``.

The engine runs under the limits it will have in a tournament's sandbox or on a ladder
(``cirulla.bots.cgroups``: 2 GiB of memory, 256 processes and threads, one core, by
default; ``--memory``, ``--processes``, ``--cpu``, ``--limits`` as ``ladder add`` takes
them), in a control group of its own where the host gives one. An engine that passes
here is not killed there for its size, and one killed by a limit is reported as that
(``killed: memory limit 2 GiB``), in the words the runner and the ladder use: the
protocol errors its death causes are not its fault to fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import shlex
import shutil
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from cirulla.bots.botspec import PYTHON_PLACEHOLDER, BotSpec, spec_form
from cirulla.bots.cgroups import (
    DEFAULT_LIMITS,
    MIB,
    BotGroup,
    BotLimits,
    RunGroups,
    describe_host,
    fallback_address_space,
    format_bytes,
    run_groups,
)
from cirulla.bots.kit import BotClient, BotError, MatchOutcome, open_aio_channel
from cirulla.bots.processes import local_server
from cirulla.bots.simple import RandomPolicy
from cirulla.bots.specs import KINDS
from cirulla.bots.text.bridge import TextEnginePolicy
from cirulla.bots.text.engine_io import EngineError
from cirulla.bots.text.limits import EngineLimits
from cirulla.bots.text.violations import Violations
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc, match_settings_pb2
from cirulla.wire import rules_to_proto

log = logging.getLogger("cirulla.bots.text")

#: (players, the engine's seat, target points) of each check match: short games.
CHECK_GAMES = ((2, 0, 11), (2, 1, 11), (3, 2, 1), (4, 1, 1))
MOVE_LIMIT_MS = 5000
#: The sign before the count of a repeated violation in the report (U+00D7, times).
TIMES = "\u00d7"
MATCH_TIMEOUT = 300.0


def engine_argv(spec: str) -> list[str]:
    """``text:CMD ARGS`` (the tournament's form, parsed as every bot spec is: ``{python}``
    is this interpreter, as in a tournament) or just ``CMD ARGS``."""
    form = spec_form(spec)
    if form == "text":
        return BotSpec.parse(spec).args()
    if form != "kind":
        # a cmd: or serve: bot speaks gRPC, not this protocol: a check would only see
        # it fail to answer `protocol_version`
        raise ValueError(
            f"{spec!r} is a {form}: bot (gRPC); bot check checks text-protocol engines "
            "('text:CMD ARGS'): play a cmd: or serve: bot in a short tournament instead, "
            f"cirulla tournament --bot random --bot mine={shlex.quote(spec)} --games 2"
        )
    argv = [arg.replace(PYTHON_PLACEHOLDER, sys.executable) for arg in shlex.split(spec)]
    if not argv:
        raise ValueError(f"engine spec {spec!r}: no command")
    name = argv[0].partition(":")[0]
    if name in KINDS and shutil.which(argv[0]) is None:
        raise ValueError(
            f"{spec!r} is a built-in bot kind, not an engine command; "
            f"as a text engine it is 'text:{{python}} -m cirulla engine {name}'"
        )
    return argv


@dataclass
class CheckReport:
    games: int = 0
    decisions: int = 0
    #: The first violations of each game with their exchange (bounded: ``Violations``).
    violations: list[tuple[str, str]] = field(default_factory=list)
    #: Every violation, those not kept included.
    violations_total: int = 0
    #: How often each distinct problem occurred (bounded: ``Violations.counts``).
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    #: ``killed: memory limit 2 GiB`` when a limit stopped the engine (the check ends)
    killed: str | None = None
    #: what bounded the engine: its limits and how they were enforced (one line)
    limits: str = ""
    #: the signal that ended the engine's last process, if one did
    exit_signal: signal.Signals | None = None

    @property
    def ok(self) -> bool:
        return (
            not self.violations_total
            and not self.violations
            and not self.errors
            and self.killed is None
        )

    def add(self, violations: Violations) -> None:
        """One game's violations."""
        self.violations.extend(violations.kept)
        self.violations_total += violations.total
        for problem, n in violations.counts.items():
            self.counts[problem] = self.counts.get(problem, 0) + n

    def text(self) -> str:
        """Each distinct problem once, with how often it occurred (``xN``) and the
        exchange of its first occurrence: an engine that repeats one wrong answer a
        hundred times gets one entry, not a hundred."""
        lines = []
        first: dict[str, str] = {}
        for problem, exchange in self.violations:
            first.setdefault(problem, exchange)
        for n, (problem, exchange) in enumerate(first.items(), 1):
            times = self.counts.get(problem, 1)
            lines.append(f"violation {n}: {problem}" + (f" {TIMES}{times}" if times > 1 else ""))
            lines.extend(f"    {line}" for line in exchange.splitlines()[-12:])
        total = max(self.violations_total, len(self.violations))
        shown = sum(self.counts.get(p, 1) for p in first)
        if total > shown:
            lines.append(f"... and {total - shown} more violations, not shown")
        lines.extend(f"error: {e}" for e in self.errors)
        if self.limits:
            lines.append(self.limits)
        verdict = "PASS" if self.ok else "FAIL"
        if self.killed is not None:
            # its death, not its protocol: what it would be told by a runner or a ladder
            lines.append(
                f"{verdict}: {self.games} games, {self.decisions} decisions by the engine, "
                f"{self.killed} (the engine needs more than that limit: raise it with "
                "--memory, --processes, --cpu or --limits, as for ladder add)"
            )
            return "\n".join(lines)
        distinct = f" ({len(first)} distinct)" if total > len(first) and first else ""
        lines.append(
            f"{verdict}: {self.games} games, {self.decisions} decisions by the engine, "
            f"{total} protocol violations{distinct}"
        )
        return "\n".join(lines)


def _probe(policy: TextEnginePolicy) -> None:
    """Admin commands a referee relies on besides play."""
    answer = policy.engine.call("known_command no_such_command")
    if not answer.ok or answer.text != "false":
        policy._flag(f"known_command no_such_command answered {answer.text!r}, expected 'false'")
    answer = policy.engine.call("no_such_command")
    if answer.ok:
        policy._flag("an unknown command was answered with '=' instead of '?'")


def _settings(players: int, target: int, seed: int) -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_to_proto("standard", {"players": players, "target": target}),
        best_of=1,
        seed=seed,
        time_control=match_settings_pb2.TimeControl(move_limit_ms=MOVE_LIMIT_MS),
        timeout_policy=match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION,
    )


def _abort(address: str, match_id: str, reason: str) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        try:
            stub.AbortMatch(
                match_service_pb2.AbortMatchRequest(match_id=match_id, reason=reason), timeout=10
            )
        except grpc.RpcError as exc:
            log.info("could not abort %s: %s", match_id, exc.details())


async def _play(
    client: BotClient, channel: grpc.aio.Channel, errors: list[str], box: list[MatchOutcome]
) -> None:
    try:
        box.append(await client.run_async(channel))
    except (BotError, EngineError, grpc.RpcError) as exc:
        errors.append(f"{client.name}: {exc}")


@dataclass(frozen=True)
class _BoundEngine(EngineLimits):
    """The engine's POSIX limits plus, first, its joining a control group (a preexec
    step: ``BotGroup.joiner``) and RLIMIT_FSIZE (a file it writes), as a sandboxed
    bot's process gets them."""

    join: Callable[[], None] | None = None
    file_bytes: int = 0

    def apply(self) -> None:
        if self.join is not None:
            self.join()  # first: a failure to join stops the start (no unlimited engine)
        super().apply()
        if self.file_bytes:
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_bytes, self.file_bytes))


def engine_limits(limits: BotLimits, group: BotGroup | None) -> _BoundEngine:
    """What the engine's process gets: in a control group, the group bounds memory and
    processes (no address-space limit: a JVM or PyTorch reserves far more than it uses);
    without one, the fallback a sandbox uses (an address space never below what such an
    engine reserves, RLIMIT_NPROC)."""
    if group is not None:
        return _BoundEngine(
            memory_mib=0,
            cpu_seconds=limits.cpu_seconds,
            processes=0,
            join=group.joiner(),
            file_bytes=limits.file_bytes,
        )
    return _BoundEngine(
        memory_mib=fallback_address_space(limits) // MIB,
        cpu_seconds=limits.cpu_seconds,
        processes=limits.processes,
        file_bytes=limits.file_bytes,
    )


def limits_line(limits: BotLimits, groups: RunGroups | str) -> str:
    """``limits: memory 2 GiB, 256 processes, 1 core (control groups v1 under ...)``."""
    how = describe_host(groups.host if isinstance(groups, RunGroups) else groups)
    return f"limits: {limits.describe()} ({how.removeprefix('per-bot limits: ')})"


def check_engine(
    spec: str,
    seed: int = 1,
    games: int = len(CHECK_GAMES),
    limits: BotLimits = DEFAULT_LIMITS,
    cgroup_base: str | None = None,
) -> CheckReport:
    """Play the check games; the engine runs under ``limits`` (the ladder's defaults
    unless given), in a control group under ``cgroup_base`` (default: $CIRULLA_CGROUP,
    else ``cirulla``) where the host gives one."""
    argv = engine_argv(spec)
    report = CheckReport()
    # One event loop for every seat of every game: grpc's asyncio layer is bound to the
    # loop it first ran on, and a loop per seat thread (each closed at its match's end)
    # left it calling into closed loops: "Event loop is closed" tracebacks after PASS.
    with (
        local_server() as address,
        run_groups(cgroup_base) as groups,
        asyncio.Runner() as runner,
    ):
        report.limits = limits_line(limits, groups)
        for n, (players, seat, target) in enumerate(CHECK_GAMES[:games]):
            group = groups.bot("engine", limits) if isinstance(groups, RunGroups) else None
            report.exit_signal = None
            try:
                bound = engine_limits(limits, group)
                _check_match(runner, address, argv, players, seat, target, seed + n, report, bound)
            finally:
                if group is not None:
                    hit = group.limit_hit()
                    group.close()
                    if hit is not None:
                        report.killed = f"killed: {hit}"
            if report.killed is None and report.exit_signal in (signal.SIGXCPU, signal.SIGXFSZ):
                report.killed = (
                    f"killed: CPU time limit {limits.cpu_seconds} s"
                    if report.exit_signal == signal.SIGXCPU
                    else f"killed: file size limit {format_bytes(limits.file_bytes)}"
                )
            if report.killed is not None:
                # the errors and violations of its death are the limit's, not its own
                report.errors, report.violations, report.counts = [], [], {}
                report.violations_total = 0
                break
            if report.games == 0 and report.errors:
                # the engine could not play its first game (it does not start, or dies
                # at the handshake): the other games would only say the same again
                break
    return report


async def _play_match(
    address: str,
    match_id: str,
    clients: list[BotClient],
    engine_seat: int,
    errors: list[str],
    outcomes: list[MatchOutcome],
) -> None:
    """Every seat on this loop and one channel; the match is aborted if the engine's
    seat fails or does not finish in time, so the other seats end too."""
    async with open_aio_channel(address) as channel:
        tasks = [
            asyncio.ensure_future(
                _play(client, channel, errors, outcomes if seat == engine_seat else [])
            )
            for seat, client in enumerate(clients)
        ]
        await asyncio.wait([tasks[engine_seat]], timeout=MATCH_TIMEOUT)
        if errors or not tasks[engine_seat].done():
            await asyncio.to_thread(
                _abort, address, match_id, "the engine under check could not go on"
            )
        _, late = await asyncio.wait(tasks, timeout=MATCH_TIMEOUT)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)


def _check_match(
    runner: asyncio.Runner,
    address: str,
    argv: list[str],
    players: int,
    engine_seat: int,
    target: int,
    seed: int,
    report: CheckReport,
    limits: EngineLimits,
) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        try:
            created = stub.CreateMatch(
                match_service_pb2.CreateMatchRequest(settings=_settings(players, target, seed)),
                timeout=10,
            )
        except grpc.RpcError as exc:
            report.errors.append(f"the check's server refused the match: {exc.code().name}")
            return
    match_id = created.match.match_id
    tokens = [t.token for t in sorted(created.seat_tokens, key=lambda t: t.seat)]
    try:
        policy = TextEnginePolicy(argv, limits=limits)
    except EngineError as exc:
        report.errors.append(str(exc))
        return
    try:
        policy.start()
        if report.games == 0:
            _probe(policy)
    except EngineError as exc:
        report.errors.append(str(exc))
        _close(policy, report)
        report.add(policy.engine.violations)
        return
    outcomes: list[MatchOutcome] = []
    errors: list[str] = []
    try:
        clients = []
        for seat in range(players):
            brain = policy if seat == engine_seat else RandomPolicy(seed=seed * 10 + seat)
            clients.append(
                BotClient(
                    brain,
                    server=address,
                    match_id=match_id,
                    token=tokens[seat],
                    name=f"{brain.name}-{seat}",
                    join_timeout=60,
                )
            )
        runner.run(_play_match(address, match_id, clients, engine_seat, errors, outcomes))
    finally:
        _close(policy, report)
    report.errors.extend(errors)
    report.games += 1
    report.decisions += sum(o.decisions for o in outcomes)
    report.add(policy.engine.violations)


def _close(policy: TextEnginePolicy, report: CheckReport) -> None:
    """Stop the engine; a signal that ended it by a POSIX limit (SIGXCPU, SIGXFSZ) is
    kept in the report, to be named as the limit."""
    code = policy.close()
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            report.exit_signal = signal.Signals(-code)
