"""No process an engine starts outlives its seat.

The engine runs in its own process group, but what it starts may leave that group
(``setsid``) and its parent (a double fork). So the bridge makes itself a *child
subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): an orphaned descendant of the engine is
re-parented to the bridge instead of to init, and stays findable by its parent chain in
``/proc``. ``EngineTree.stop`` then signals the engine's group and every descendant it
finds, SIGTERM first and SIGKILL after a short grace, until none is left, and reaps the
orphans it adopted. (The engine itself also gets SIGKILL if the bridge dies:
``die_with_parent``. A SIGKILLed bridge cannot clean up its engine's descendants: the
tournament's ``--sandbox`` puts bridge and engine in a PID namespace for that.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from cirulla.bots.processes import PR_SET_CHILD_SUBREAPER, prctl

#: Rounds of SIGKILL at most (a process may fork between a scan and its signal).
KILL_ROUNDS = 50

_PROC = Path("/proc")
#: Leaders of the engines alive in this process: another engine's orphans are not ours.
_LEADERS: set[int] = set()


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux only); True if it does."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def _processes() -> dict[int, tuple[int, bool]]:
    """pid -> (parent pid, is a zombie), for every process in /proc."""
    table: dict[int, tuple[int, bool]] = {}
    try:
        entries = list(os.scandir(_PROC))
    except OSError:
        return table
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2:
            table[int(entry.name)] = (int(fields[1]), fields[0] == b"Z")
    return table


def children_of(pid: int) -> set[int]:
    return {p for p, (parent, _) in _processes().items() if parent == pid}


class EngineTree:
    """The engine process ``leader`` and everything it started."""

    def __init__(self, leader: int, foreign: set[int]) -> None:
        """``foreign``: this process's children that existed before the engine (a local
        server of ``cirulla bot check``), never the engine's."""
        self.leader = leader
        self.foreign = set(foreign)
        self.me = os.getpid()
        _LEADERS.add(leader)

    def _members(self, table: dict[int, tuple[int, bool]]) -> tuple[set[int], set[int]]:
        """(live members, zombie orphans to reap): the leader's descendants, and those
        of the orphans this process adopted."""
        kids: dict[int, list[int]] = {}
        for pid, (parent, _) in table.items():
            kids.setdefault(parent, []).append(pid)
        others = (self.foreign | _LEADERS) - {self.leader}
        roots = [self.leader] + [p for p in kids.get(self.me, []) if p not in others]
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            pid = stack.pop()
            if pid in seen or pid not in table:
                continue
            seen.add(pid)
            stack.extend(kids.get(pid, []))
        live = {p for p in seen if not table[p][1]}
        # the leader is reaped by its Popen (which keeps its exit code)
        zombies = {p for p in seen - live if table[p][0] == self.me and p != self.leader}
        return live, zombies

    def alive(self) -> set[int]:
        live, zombies = self._members(_processes())
        self._reap(zombies)
        return live

    @staticmethod
    def _reap(zombies: set[int]) -> None:
        for pid in zombies:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)

    def _signal(self, sig: int, members: set[int], group: bool) -> None:
        if group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.leader, sig)
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    def stop(self, grace: float, group: bool = True) -> None:
        """SIGTERM to the group and every member, SIGKILL to whatever is left after
        ``grace`` seconds; returns when none is left (or after ``KILL_ROUNDS``).
        ``group``: signal the leader's process group too (only while the leader is not
        reaped: after that its number may be reused)."""
        members = self.alive()
        if members or group:
            self._signal(signal.SIGTERM, members, group)
            deadline = time.monotonic() + grace
            while (members := self.alive()) and time.monotonic() < deadline:
                time.sleep(0.02)
        for _ in range(KILL_ROUNDS):
            if not members:
                break
            self._signal(signal.SIGKILL, members, group and self.leader in members)
            time.sleep(0.01)
            members = self.alive()
        _LEADERS.discard(self.leader)
