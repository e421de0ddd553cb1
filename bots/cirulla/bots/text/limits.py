"""Resource limits of a text engine (``cirulla bot text --memory-limit ...``).

An engine is someone else's program: it gets POSIX resource limits, set in the engine's
process just before it starts (so everything it starts inherits them): its address space
(RLIMIT_AS), its CPU time (RLIMIT_CPU: SIGXCPU, then SIGKILL a second later), the
processes and threads of its user (RLIMIT_NPROC, which the kernel does not enforce for
root) and no core files. A limit of 0 leaves the one the bridge has. A limit is never
raised above the bridge's own hard limit (under ``--sandbox`` the sandbox sets those).

There is no address-space limit by default: a JVM reserves a quarter of the machine's
memory for its heap at start and PyTorch maps gigabytes it never touches, so a default
of 2 GiB stopped honest engines before their first word. What an engine *uses* is bounded
where it matters, in a tournament's sandbox or on a ladder, by the bot's memory control
group (``cirulla.bots.cgroups``).
"""

from __future__ import annotations

import argparse
import resource
from collections.abc import Callable
from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class EngineLimits:
    """The defaults fit every example engine, the JVM and Node.js included (they reserve
    far more address space than they use: no address-space limit unless asked)."""

    memory_mib: int = 0  # RLIMIT_AS, MiB (0: none)
    cpu_seconds: int = 3600  # RLIMIT_CPU, seconds of CPU time
    processes: int = 1024  # RLIMIT_NPROC: processes and threads of the user
    core: int = 0  # RLIMIT_CORE: no core dumps

    def rlimits(self) -> list[tuple[int, int]]:
        """(resource, value) of each limit to set (0: leave it)."""
        wanted = [
            (resource.RLIMIT_AS, self.memory_mib * MIB),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_NPROC, self.processes),
        ]
        return [(which, value) for which, value in wanted if value > 0] + [
            (resource.RLIMIT_CORE, self.core)
        ]

    def apply(self) -> None:
        """Set the limits on this process (the engine's, in its preexec_fn)."""
        for which, value in self.rlimits():
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            if which == resource.RLIMIT_CPU:  # SIGXCPU at the limit, SIGKILL a second on
                limit = (value, value + 1 if hard == resource.RLIM_INFINITY else hard)
            else:
                limit = (value, value)
            resource.setrlimit(which, limit)


DEFAULT_LIMITS = EngineLimits()


def _count(option: str, unit: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise argparse.ArgumentTypeError(
                f"{option} takes a whole number of {unit} (0: no limit), not {text!r}"
            )
        return value

    return parse


def add_limit_arguments(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """--memory-limit, --cpu-limit, --processes (``cirulla bot text``), in a group of
    their own (returned)."""
    group = p.add_argument_group("text engine (cirulla bot text; limits 0: no limit)")
    group.add_argument(
        "--memory-limit",
        type=_count("--memory-limit", "MiB"),
        default=DEFAULT_LIMITS.memory_mib,
        metavar="MIB",
        help="the engine's address space (RLIMIT_AS; default none: a JVM or PyTorch "
        "reserves gigabytes it never uses; memory used is bounded by the sandbox)",
    )
    group.add_argument(
        "--cpu-limit",
        type=_count("--cpu-limit", "seconds"),
        default=DEFAULT_LIMITS.cpu_seconds,
        metavar="SECONDS",
        help=f"the engine's CPU time (RLIMIT_CPU; default {DEFAULT_LIMITS.cpu_seconds})",
    )
    group.add_argument(
        "--processes",
        type=_count("--processes", "processes"),
        default=None,  # bot text: DEFAULT_LIMITS.processes; bot check: its pids limit
        metavar="N",
        help="processes and threads of the engine's user (RLIMIT_NPROC; not enforced "
        f"for root; default {DEFAULT_LIMITS.processes}); check: of the engine's tree "
        "(its control group; default 256)",
    )
    return group


def limits_from_args(args: argparse.Namespace) -> EngineLimits:
    return EngineLimits(
        memory_mib=getattr(args, "memory_limit", DEFAULT_LIMITS.memory_mib),
        cpu_seconds=getattr(args, "cpu_limit", DEFAULT_LIMITS.cpu_seconds),
        processes=getattr(args, "processes", None) or DEFAULT_LIMITS.processes,
    )
