"""Per-bot resource limits by the kernel's own accounting: control groups.

A bot is someone else's program, and a ladder runs many at once: each bot's process tree
gets a control group of its own, so what it does is charged to it and to nothing else.

* **memory** (the memory controller): resident memory *and* the files it writes in its
  tmpfs folders (the kernel charges tmpfs pages to the group that wrote them), not
  address space: a JVM or PyTorch reserves gigabytes it never touches, and an
  address-space limit (RLIMIT_AS) made them fail at start. Over its limit the kernel's
  OOM killer kills inside the group only.
* **processes** (the pids controller): processes and threads of the tree only; RLIMIT_NPROC
  counts every thread of the user, the ladder's own included, so one bot's fork bomb
  stopped other bots' sandboxes from starting.
* **cpu** (the cpu controller): a quota of cores (CFS bandwidth), so a bot that burns
  every core gets its share and the others keep theirs.

Control groups v2 where the host has them (one tree at /sys/fs/cgroup), v1 otherwise
(one tree per controller). The ladder usually runs as an unprivileged user: an operator
gives it a subtree once, as root (``cirulla ladder cgroup-setup --user U``, which makes
``<controller>/cirulla`` owned by U on v1 and, on v2, the same folder with the three
controllers enabled). Each run then makes a group of its own under it (``run-<pid>-<hex>``,
so parallel runs never share one) and one group per bot process inside that.

Where the host gives no such subtree, ``HostGroups.detect`` says why in one line; the
callers then say so at start and fall back to POSIX limits (``fallback_rlimits``), which
bound less (docs/ladder.md, "Threat model").

It lives on the bots' floor, like ``cirulla.bots.processes``, because ``cirulla bot
check`` and the text bridge start bot processes as much as the runner and the ladder do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import re
import resource
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

KIB = 1024
MIB = 1024**2
GIB = 1024**3

#: Where the kernel's control group filesystems are mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: The controllers a bot's group is limited by.
CONTROLLERS = ("memory", "pids", "cpu")
#: The delegated folder an operator makes once (under each v1 controller, or the v2 tree).
DEFAULT_BASE = "cirulla"
#: Environment variable naming another delegated folder (relative to each tree's root).
BASE_ENV = "CIRULLA_CGROUP"
#: CFS period, microseconds (the kernel's default).
CPU_PERIOD_US = 100_000


@dataclass(frozen=True)
class BotLimits:
    """The limits of one bot's process tree.

    The defaults fit the bots people write: 2 GiB of memory is what a JVM engine, a Node
    engine or a PyTorch model of a card game uses with room to spare (what they
    *reserve* is not counted), 256 processes and threads cover a JVM's (about 20) and a
    thread pool per core, one core is what the built-in searches use.
    """

    memory_bytes: int = 2 * GIB  # memory cgroup: resident memory + its tmpfs files
    processes: int = 256  # pids cgroup: processes and threads of the tree
    cpu: float = 1.0  # cores (CFS quota); 0: no quota
    output_bytes: int = 16 * MIB  # what the supervisor reads of its stdout before it stops it
    cpu_seconds: int = 3600  # RLIMIT_CPU per process
    file_bytes: int = 64 * MIB  # RLIMIT_FSIZE: one file it writes (its log, a tmp file)
    tmp_bytes: int = 512 * MIB  # the size of its tmpfs /tmp (bubblewrap's --size)

    def text(self, all_keys: bool = False) -> str:
        """``memory=2G,processes=256,cpu=1`` (the form ``parse_limits`` reads; with
        ``all_keys`` output and tmp too)."""
        return ",".join(
            f"{key}={getter(self)}"
            for key, (_, getter) in _KEYS.items()
            if all_keys or key in SHOWN
        )

    def describe(self) -> str:
        """``memory 2 GiB, 256 processes, 1 core``: for people."""
        cores = f"{self.cpu:g} core" + ("" if self.cpu == 1 else "s") if self.cpu else "any CPU"
        return f"memory {format_bytes(self.memory_bytes)}, {self.processes} processes, {cores}"


#: The defaults (one instance, for default arguments).
DEFAULT_LIMITS = BotLimits()


def format_bytes(value: int) -> str:
    """``2 GiB``, ``512 MiB``, ``100 KiB``, ``17 bytes``: exact, in the largest unit."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value} bytes"


def _short_bytes(value: int) -> str:
    for unit, size in (("G", GIB), ("M", MIB), ("K", KIB)):
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": KIB, "M": MIB, "G": GIB, "T": 1024 * GIB}


def parse_bytes(text: str, what: str = "memory") -> int:
    """``4G``, ``512M``, ``2GiB``, ``1.5G``, ``1048576`` (bytes): binary units."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"{what}: {text!r} is not a size (like 4G, 512M or 2GiB)")
    value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value <= 0:
        raise ValueError(f"{what}: must be more than 0, not {text!r}")
    return value


def _count(text: str, what: str) -> int:
    if not text.strip().isdigit() or int(text) <= 0:
        raise ValueError(f"{what}: a whole number above 0, not {text!r}")
    return int(text)


def _cores(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1024:
        raise ValueError(f"{what}: a number of cores (like 1, 0.5 or 2; 0: no quota), not {text!r}")
    return value


#: Each key of the limits' text form: (field, how it prints).
_KEYS: dict[str, tuple[str, Callable[[BotLimits], str]]] = {
    "memory": ("memory_bytes", lambda lim: _short_bytes(lim.memory_bytes)),
    "processes": ("processes", lambda lim: str(lim.processes)),
    "cpu": ("cpu", lambda lim: f"{lim.cpu:g}"),
    "output": ("output_bytes", lambda lim: _short_bytes(lim.output_bytes)),
    "tmp": ("tmp_bytes", lambda lim: _short_bytes(lim.tmp_bytes)),
}
#: The keys ``BotLimits.text`` prints (the ones people set).
SHOWN = ("memory", "processes", "cpu")
#: Upper bounds an operator's value is checked against (a typo is refused, not obeyed).
_MAX = {
    "memory_bytes": 1024 * GIB,
    "processes": 65536,
    "output_bytes": 64 * GIB,
    "tmp_bytes": 1024 * GIB,
}


def parse_limits(text: str, base: BotLimits | None = None) -> BotLimits:
    """``memory=4G,processes=64,cpu=2,output=32M,tmp=1G`` over ``base`` (the defaults);
    a ValueError names the key and what it takes."""
    limits = base or BotLimits()
    changes: dict[str, object] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in _KEYS:
            raise ValueError(f"limits: {item!r} is not KEY=VALUE with a key of {', '.join(_KEYS)}")
        name = _KEYS[key][0]
        parsed: int | float
        if key in ("memory", "output", "tmp"):
            parsed = parse_bytes(value, key)
        elif key == "processes":
            parsed = _count(value, key)
        else:
            parsed = _cores(value, key)
        if name in _MAX and parsed > _MAX[name]:
            most = _MAX[name]
            shown = _short_bytes(most) if key != "processes" else str(most)
            raise ValueError(f"{key}: at most {shown}, not {value!r}")
        changes[name] = parsed
    return dataclasses.replace(limits, **changes)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the host


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 16 * GIB


def fallback_address_space(limits: BotLimits) -> int:
    """RLIMIT_AS where no memory group can be had: never below what a JVM (a quarter of
    the machine's memory for its heap, more for its classes and code) or PyTorch
    reserves, so it only stops a process reserving more than the machine could give."""
    return max(16 * GIB, 2 * _physical_memory(), 4 * limits.memory_bytes)


def fallback_rlimits(limits: BotLimits) -> list[tuple[int, int]]:
    """The POSIX limits of a bot's processes when it has no control group."""
    return [
        (resource.RLIMIT_AS, fallback_address_space(limits)),
        (resource.RLIMIT_NPROC, limits.processes),
    ]


def base_rlimits(limits: BotLimits) -> list[tuple[int, int]]:
    """The POSIX limits of a bot's processes in every case: CPU time per process, the
    size of one file it writes (its log included), no core files."""
    return [
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_CORE, 0),
    ]


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, filesystem type, super options) of the cgroup mounts."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields = left.split()
            rest = right.split()
            if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
                found.append((fields[4].replace("\\040", " "), rest[0], rest[2]))
    return found


@dataclass(frozen=True)
class HostGroups:
    """The delegated subtree this process makes bot groups in: one folder per controller
    (v1) or one folder of the unified tree (v2)."""

    version: int
    #: controller -> its delegated folder (on v2 the same folder for all three)
    bases: dict[str, Path]

    @classmethod
    def detect(cls, base: str | None = None) -> HostGroups | str:
        """This host's delegated subtree, or the one-line reason there is none.

        ``base`` (default $CIRULLA_CGROUP, else ``cirulla``) is the folder under each
        tree's root; root creates it when it is missing, anyone else needs it made (and
        owned by them) by ``cirulla ladder cgroup-setup``."""
        name = (base or os.environ.get(BASE_ENV) or DEFAULT_BASE).strip("/")
        if not name or ".." in name.split("/"):
            return f"control groups: {BASE_ENV}={name!r} is not a folder name"
        mounts = _mounts()
        v1: dict[str, Path] = {}
        v2: Path | None = None
        for point, kind, options in mounts:
            if kind == "cgroup2" and v2 is None:
                v2 = Path(point)
            if kind == "cgroup":
                for controller in CONTROLLERS:
                    if controller in options.split(",") and controller not in v1:
                        v1[controller] = Path(point)
        if v2 is not None and set(_read(v2 / "cgroup.controllers").split()) >= set(CONTROLLERS):
            return cls._prepare(2, {c: v2 / name for c in CONTROLLERS})
        missing = [c for c in CONTROLLERS if c not in v1]
        if missing:
            return (
                "control groups: the host has no " + ", ".join(missing) + " controller (v1 or v2)"
            )
        return cls._prepare(1, {c: v1[c] / name for c in CONTROLLERS})

    @classmethod
    def _prepare(cls, version: int, bases: dict[str, Path]) -> HostGroups | str:
        for controller, folder in bases.items():
            if not folder.is_dir():
                if os.geteuid() != 0:
                    return (
                        f"control groups: {folder} does not exist; an operator makes it once "
                        "as root: cirulla ladder cgroup-setup --user "
                        f"{_user_name()}"
                    )
                try:
                    folder.mkdir(exist_ok=True)
                except OSError as exc:
                    return f"control groups: cannot make {folder} ({exc.strerror})"
            if not os.access(folder, os.W_OK | os.X_OK):
                return (
                    f"control groups: {folder} is not writable by {_user_name()}; "
                    f"cirulla ladder cgroup-setup --user {_user_name()} (as root) gives it"
                )
            if version == 2 and controller == "memory":
                problem = _enable_v2(folder)
                if problem:
                    return problem
        return cls(version, dict(bases))

    def new_run(self) -> RunGroups:
        """A group of this run's own, under the delegated folder; stale empty groups of
        runs that died are removed first."""
        self.sweep()
        name = f"run-{os.getpid()}-{secrets.token_hex(4)}"
        paths = {c: self.bases[c] / name for c in CONTROLLERS}
        made: list[Path] = []
        for path in dict.fromkeys(paths.values()):
            path.mkdir()
            made.append(path)
            if self.version == 2:
                _enable_v2(path)
        return RunGroups(self, paths)

    def sweep(self) -> None:
        """Remove the empty run groups whose process is gone (a run killed by SIGKILL)."""
        for base in dict.fromkeys(self.bases.values()):
            with contextlib.suppress(OSError):
                for run in base.glob("run-*"):
                    pid = run.name.split("-")[1]
                    if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                        _remove_tree(run)


def _user_name() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def _enable_v2(folder: Path) -> str | None:
    """Let ``folder``'s children use the three controllers (v2 ``subtree_control``)."""
    wanted = " ".join(f"+{c}" for c in CONTROLLERS)
    try:
        (folder / "cgroup.subtree_control").write_text(wanted)
    except OSError as exc:
        return f"control groups: cannot enable {wanted} in {folder} ({exc.strerror})"
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _keyed(path: Path) -> dict[str, int]:
    """A ``key value`` file (memory.events, pids.events, cpu.stat, memory.oom_control)."""
    out = {}
    for line in _read(path).splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            out[key] = int(value)
    return out


def _write(path: Path, value: str) -> None:
    with contextlib.suppress(OSError):
        path.write_text(value)


def _remove_tree(path: Path) -> None:
    """rmdir a group and its (empty) children, deepest first."""
    with contextlib.suppress(OSError):
        for child in sorted((p for p in path.iterdir() if p.is_dir()), reverse=True):
            _remove_tree(child)
    with contextlib.suppress(OSError):
        path.rmdir()


@dataclass
class RunGroups:
    """This run's groups: one per bot process tree (``bot``), removed by ``close``."""

    host: HostGroups
    paths: dict[str, Path]

    def __post_init__(self) -> None:
        self._count = 0

    @property
    def version(self) -> int:
        return self.host.version

    def bot(self, name: str, limits: BotLimits) -> BotGroup:
        """A new group for one process tree of bot ``name``, with ``limits`` set."""
        self._count += 1
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:40]
        leaf = f"{safe}-{self._count}-{secrets.token_hex(2)}"
        group = BotGroup(self.version, {c: p / leaf for c, p in self.paths.items()}, limits)
        group.create()
        return group

    def close(self) -> None:
        """Kill what is left in the run's groups and remove them."""
        for path in dict.fromkeys(self.paths.values()):
            with contextlib.suppress(OSError):
                for leaf in path.iterdir():
                    if leaf.is_dir():
                        leaves = dict.fromkeys(CONTROLLERS, leaf)
                        BotGroup(self.version, leaves, DEFAULT_LIMITS).kill()
            _remove_tree(path)


@dataclass(frozen=True)
class Throttling:
    """A group's CPU quota at work (its cpu.stat counters, cumulative): ``periods`` of
    the CFS bandwidth period it had runnable tasks in, ``throttled`` of those it hit its
    quota in, ``seconds`` it spent throttled."""

    periods: int = 0
    throttled: int = 0
    seconds: float = 0.0

    def __sub__(self, other: Throttling) -> Throttling:
        return Throttling(
            self.periods - other.periods,
            self.throttled - other.throttled,
            self.seconds - other.seconds,
        )

    def held_back(self) -> bool:
        """Whether the quota held it back, not merely clipped a moment of it: throttled
        for a quarter of a second or more, in at least a fifth of its periods. A bot
        within its cores is throttled in no period (a start-up's burst of threads in a
        few); one that wants every core is throttled in most."""
        return self.seconds >= 0.25 and self.throttled * 5 >= self.periods > 0


#: Threads of one group read at most per ``CpuDemand.sample`` (a thread bomb holds its
#: process limit's worth; what is left unread is counted at the next sample).
DEMAND_THREADS = 512


@dataclass
class CpuDemand:
    """How much CPU a group's threads *wanted*: the time each ran plus the time it waited,
    runnable, for a CPU (``/proc/TID/schedstat``), summed over samples. Unlike the
    quota's throttling counters this does not depend on the machine's load: a thread
    that spins is runnable all the time whether it runs or waits, a bot waiting for its
    turn is neither. Threads that end between samples are counted up to the last one."""

    #: thread id -> its run + wait nanoseconds at the last sample
    seen: dict[int, int] = dataclasses.field(default_factory=dict)
    #: nanoseconds wanted in all, over the samples
    total_ns: int = 0

    def sample(self, group: BotGroup) -> None:
        now: dict[int, int] = {}
        for tid in group.threads()[:DEMAND_THREADS]:
            fields = _read(Path(f"/proc/{tid}/schedstat")).split()
            if len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
                now[tid] = int(fields[0]) + int(fields[1])
                # a reused thread id starts lower: counted from 0
                self.total_ns += max(0, now[tid] - self.seen.get(tid, 0))
        self.seen = now

    @property
    def seconds(self) -> float:
        return self.total_ns / 1e9


@dataclass
class BotGroup:
    """One bot process tree's group (a folder per controller on v1, one on v2)."""

    version: int
    paths: dict[str, Path]
    limits: BotLimits

    def create(self) -> None:
        for path in dict.fromkeys(self.paths.values()):
            path.mkdir(exist_ok=True)
        memory, pids, cpu = (self.paths[c] for c in CONTROLLERS)
        lim = self.limits
        if self.version == 2:
            _write(memory / "memory.max", str(lim.memory_bytes))
            _write(memory / "memory.swap.max", "0")
            _write(pids / "pids.max", str(lim.processes))
            if lim.cpu > 0:
                _write(cpu / "cpu.max", f"{int(lim.cpu * CPU_PERIOD_US)} {CPU_PERIOD_US}")
        else:
            (memory / "memory.limit_in_bytes").write_text(str(lim.memory_bytes))
            _write(memory / "memory.memsw.limit_in_bytes", str(lim.memory_bytes))
            (pids / "pids.max").write_text(str(lim.processes))
            if lim.cpu > 0:
                _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                _write(cpu / "cpu.cfs_quota_us", str(int(lim.cpu * CPU_PERIOD_US)))
        self.started = time.monotonic()

    def joiner(self) -> Callable[[], None]:
        """A preexec_fn step: the new process (and so all it starts) joins this group
        before it runs the bot's program. Paths are made here, in the parent: the child
        between fork and exec only opens and writes."""
        files = [str(p / "cgroup.procs") for p in dict.fromkeys(self.paths.values())]

        def join() -> None:
            pid = str(os.getpid()).encode()
            for name in files:
                fd = os.open(name, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)

        return join

    def pids(self) -> list[int]:
        text = _read(self.paths["pids"] / "cgroup.procs")
        return [int(p) for p in text.split() if p.isdigit()]

    def threads(self) -> list[int]:
        """Every thread of the group's processes (v1: ``tasks``; v2: ``cgroup.threads``)."""
        name = "cgroup.threads" if self.version == 2 else "tasks"
        text = _read(self.paths["pids"] / name)
        return [int(p) for p in text.split() if p.isdigit()]

    def memory_peak(self) -> int:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        text = _read(self.paths["memory"] / name).strip()
        return int(text) if text.isdigit() else 0

    def oom_kills(self) -> int:
        if self.version == 2:
            return _keyed(self.paths["memory"] / "memory.events").get("oom_kill", 0)
        return _keyed(self.paths["memory"] / "memory.oom_control").get("oom_kill", 0)

    def pids_refused(self) -> int:
        """How many forks the process limit refused."""
        return _keyed(self.paths["pids"] / "pids.events").get("max", 0)

    def cpu_throttling(self) -> Throttling:
        """What its CPU quota did so far (cpu.stat: the CFS periods the group ran in,
        those it was throttled in, for how long): zeros where the file is not there."""
        stat = _keyed(self.paths["cpu"] / "cpu.stat")
        if self.version == 2:
            seconds = stat.get("throttled_usec", 0) / 1e6
        else:
            seconds = stat.get("throttled_time", 0) / 1e9
        return Throttling(stat.get("nr_periods", 0), stat.get("nr_throttled", 0), seconds)

    def limit_hit(self) -> str | None:
        """The hard limit this tree ran into (which stops it), or None: ``memory limit
        2 GiB`` after an OOM kill in the group, ``process limit 256`` after a refused
        fork."""
        if self.oom_kills():
            return f"memory limit {format_bytes(self.limits.memory_bytes)}"
        if self.pids_refused():
            return f"process limit {self.limits.processes}"
        return None

    def kill(self) -> None:
        """SIGKILL every process left in the group (a tree that escaped its process group)."""
        if self.version == 2:
            kill_file = self.paths["pids"] / "cgroup.kill"
            if kill_file.exists():
                _write(kill_file, "1")
                return
        for _ in range(20):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def close(self, wait: float = 2.0) -> None:
        """Kill what is left and remove the group (once the kernel has let its processes go)."""
        self.kill()
        deadline = time.monotonic() + wait
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.02)
        for path in dict.fromkeys(self.paths.values()):
            with contextlib.suppress(OSError):
                path.rmdir()


def describe_host(result: HostGroups | str) -> str:
    """The one line a runner or the ladder says at start about per-bot limits."""
    if isinstance(result, str):
        return (
            f"per-bot limits: none ({result}); bots get POSIX limits only: memory, "
            "processes and CPU are not bounded per bot (docs/ladder.md, 'Threat model')"
        )
    folders = sorted({str(p) for p in result.bases.values()})
    return f"per-bot limits: control groups v{result.version} under {', '.join(folders)}"


@contextlib.contextmanager
def run_groups(base: str | None = None) -> Iterator[RunGroups | str]:
    """This run's groups for as long as the block runs (or the reason there are none)."""
    host = HostGroups.detect(base)
    if isinstance(host, str):
        yield host
        return
    try:
        run = host.new_run()
    except OSError as exc:
        yield f"control groups: cannot make a group under {host.bases['memory']} ({exc.strerror})"
        return
    try:
        yield run
    finally:
        run.close()


#: The files of a delegated v2 folder its owner writes (the kernel's delegation rules).
V2_DELEGATED_FILES = ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads")


def delegate(user: str, base: str | None = None) -> list[Path]:
    """As root, once: make the delegated folder under each tree (``base``, default
    ``cirulla``) and give it to ``user``, who can then make and limit bot groups in it
    without privileges. Idempotent; returns the folders. A ValueError says why not.

    On v2 an unprivileged process may only move processes between groups below a common
    folder it owns, so a ladder started by ``user`` from outside the folder must be
    started in it (docs/ladder.md, "Threat model")."""
    if os.geteuid() != 0:
        raise ValueError("cgroup-setup: run it as root (it gives a folder of /sys/fs/cgroup)")
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise ValueError(f"--user: no user named {user!r}") from None
    name = (base or DEFAULT_BASE).strip("/")
    if not name or ".." in name.split("/"):
        raise ValueError(f"--base: {name!r} is not a folder name")
    host = HostGroups.detect(name)  # as root this makes the folders
    if isinstance(host, str):
        raise ValueError(host)
    folders = list(dict.fromkeys(host.bases.values()))
    for folder in folders:
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        names = V2_DELEGATED_FILES if host.version == 2 else ("cgroup.procs", "tasks")
        for file in names:
            with contextlib.suppress(FileNotFoundError):
                os.chown(folder / file, entry.pw_uid, entry.pw_gid)
    return folders


def undelegate(base: str) -> None:
    """Remove a delegated folder made by ``delegate`` (with its empty groups)."""
    host = HostGroups.detect(base)
    if not isinstance(host, str):
        for folder in dict.fromkeys(host.bases.values()):
            _remove_tree(folder)
