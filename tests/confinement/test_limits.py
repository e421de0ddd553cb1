"""Per-bot limits with real bwrap and the host's real control groups: what a hostile
process inside cannot take, and what an honest one that reserves much can still do.

This machine and CI run as root with control groups v1 (memory, pids, cpu), so each test
makes a run group of its own (``run-<pid>-<hex>``: safe under xdist) and removes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cirulla.bots.cgroups import (
    GIB,
    MIB,
    BotGroup,
    BotLimits,
    HostGroups,
    RunGroups,
    describe_host,
    fallback_address_space,
    format_bytes,
    parse_limits,
)
from cirulla.clients.matches import sandbox


@pytest.fixture
def groups() -> Iterator[RunGroups]:
    host = HostGroups.detect()
    assert not isinstance(host, str), host  # CI and this machine have them: no skip
    run = host.new_run()
    try:
        yield run
    finally:
        run.close()
    assert not any(p.exists() for p in run.paths.values())


def run_in(
    group: BotGroup | None, code: str, limits: BotLimits, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    box = sandbox.Sandbox(limits, group=group)
    argv, outer, preexec = box.wrap([sys.executable, "-c", code], {}, server_socket=None)
    return subprocess.run(
        argv, env=outer, preexec_fn=preexec, capture_output=True, text=True, timeout=timeout
    )


#: An honest process that reserves what a JVM or PyTorch reserves and touches little.
RESERVE = """
import mmap
space = mmap.mmap(-1, 8 * 1024**3, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for offset in range(0, 200 * 1024**2, 4096):
    space[offset] = 1
print('RESERVED 8 GiB, TOUCHED 200 MiB')
"""


def test_an_8_gib_reservation_touching_200_mib_runs_under_the_defaults(
    groups: RunGroups,
) -> None:
    """What the JVM and PyTorch do (issue: RLIMIT_AS 2 GiB made them fail at start)."""
    group = groups.bot("reserver", BotLimits())
    try:
        done = run_in(group, RESERVE, BotLimits())
        assert done.returncode == 0, done.stderr
        assert "RESERVED 8 GiB, TOUCHED 200 MiB" in done.stdout
        assert 200 * MIB <= group.memory_peak() < 1 * GIB
        assert group.limit_hit() is None
    finally:
        group.close()


def test_without_groups_the_fallback_still_lets_it_reserve() -> None:
    """Where no control group can be had, the address-space limit never goes below what
    a JVM reserves: the same process runs."""
    assert fallback_address_space(BotLimits()) >= 16 * GIB
    done = run_in(None, RESERVE, BotLimits())
    assert done.returncode == 0, done.stderr


def test_a_memory_balloon_is_killed_inside_its_group_and_named(groups: RunGroups) -> None:
    limits = BotLimits(memory_bytes=300 * MIB)
    group = groups.bot("balloon", limits)
    try:
        done = run_in(group, "x = bytearray(600 * 1024**2); print('ALLOCATED')", limits)
        assert done.returncode != 0
        assert "ALLOCATED" not in done.stdout
        assert group.limit_hit() == "memory limit 300 MiB"
    finally:
        group.close()


def test_tmpfs_files_are_bounded_and_charged_to_the_bot(groups: RunGroups) -> None:
    """/tmp, /dev/shm and /run are sized tmpfs, the root and /dev read-only: a bot that
    fills its files stops at their size, and what it holds there counts in its group."""
    limits = BotLimits(tmp_bytes=128 * MIB)
    group = groups.bot("filler", limits)
    code = """
import os
def fill(path):
    written = 0
    try:
        while written < 1024**3:  # files of 16 MiB: one file is bounded by RLIMIT_FSIZE
            with open(f'{path}{written}', 'wb') as out:
                for _ in range(16):
                    out.write(b'x' * 1024**2); out.flush(); written += 1024**2
    except OSError as exc:
        return f'{written // 1024**2} {exc.errno}'
    return f'{written // 1024**2} none'
for path in ('/tmp/fill', '/dev/shm/fill', '/run/fill', '/fill', '/dev/fill'):
    print(path, fill(path))
print('PEAK-CHECK')
"""
    try:
        done = run_in(group, code, limits)
        assert done.returncode == 0, done.stderr
        lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
        tmp_mib, tmp_errno = lines["/tmp/fill"].split()
        assert int(tmp_mib) <= 128 and tmp_errno == "28"  # ENOSPC at its size
        assert int(lines["/dev/shm/fill"].split()[0]) <= 64
        assert int(lines["/run/fill"].split()[0]) <= 1
        for read_only in ("/fill", "/dev/fill"):
            assert lines[read_only].split()[0] == "0", done.stdout
        assert group.memory_peak() >= 100 * MIB  # its files were charged to it
    finally:
        group.close()


def test_a_thread_and_fork_bomb_stops_at_its_own_process_limit(groups: RunGroups) -> None:
    """The pids group counts this tree only: the bomb is refused at its limit, while a
    sandbox started beside it meanwhile still starts (RLIMIT_NPROC counted the user's)."""
    limits = BotLimits(processes=40)
    group = groups.bot("bomb", limits)
    code = """
import os, threading, time
threads = 0
try:
    while threads < 10000:
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start(); threads += 1
except RuntimeError:
    pass
forks = 0
try:
    while forks < 10000:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        forks += 1
except OSError:
    pass
print('THREADS', threads, 'FORKS', forks, flush=True)
os._exit(0)
"""
    try:
        box = sandbox.Sandbox(limits, group=group)
        argv, outer, preexec = box.wrap([sys.executable, "-c", code], {}, server_socket=None)
        bomb = subprocess.Popen(
            argv, env=outer, preexec_fn=preexec, stdout=subprocess.PIPE, text=True
        )
        assert bomb.stdout is not None
        line = bomb.stdout.readline()
        assert line.startswith("THREADS"), line
        counts = line.split()
        assert int(counts[1]) + int(counts[3]) < 40
        assert group.limit_hit() == "process limit 40"
        assert len(group.pids()) <= 40
        # the bomb's tree is still alive and at its limit; another bot starts all the same
        neighbour = groups.bot("honest", BotLimits())
        try:
            done = run_in(neighbour, "print('STARTED')", BotLimits())
            assert "STARTED" in done.stdout, done.stderr
        finally:
            neighbour.close()
        bomb.kill()
        bomb.wait(10)
    finally:
        group.close()
    assert not group.pids()


def test_a_bot_cannot_see_or_leave_its_group(groups: RunGroups) -> None:
    """Its own cgroup namespace (it sees itself at the root), no cgroup filesystem: it
    cannot move itself out of its group or touch another's."""
    group = groups.bot("escaper", BotLimits())
    code = """
import os
print('CGROUP', open('/proc/self/cgroup').read().split())
print('SYS', os.path.exists('/sys/fs/cgroup'))
"""
    try:
        done = run_in(group, code, BotLimits())
        assert done.returncode == 0, done.stderr
        assert "SYS False" in done.stdout
        cgroups = done.stdout.split("CGROUP")[1].split("\n")[0]
        assert "run-" not in cgroups and "cirulla" not in cgroups
    finally:
        group.close()


def test_limits_parse_print_and_refuse_in_one_line() -> None:
    limits = parse_limits("memory=4G, processes=64,cpu=2")
    assert (limits.memory_bytes, limits.processes, limits.cpu) == (4 * GIB, 64, 2.0)
    assert limits.text() == "memory=4G,processes=64,cpu=2"
    assert parse_limits(limits.text()) == limits
    assert limits.describe() == "memory 4 GiB, 64 processes, 2 cores"
    assert parse_limits("memory=512MiB").memory_bytes == 512 * MIB
    assert format_bytes(2 * GIB) == "2 GiB"
    for bad, named in (
        ("memory=lots", "memory"),
        ("processes=0", "processes"),
        ("cpu=-1", "cpu"),
        ("swap=1G", "KEY=VALUE"),
        ("memory=4096G", "memory: at most"),
    ):
        with pytest.raises(ValueError, match=named) as caught:
            parse_limits(bad)
        assert "\n" not in str(caught.value)


def test_an_unprivileged_user_without_a_delegated_folder_is_told_in_one_line(
    tmp_path: Path,
) -> None:
    """As another user, with no folder delegated, detection names the operator's step."""
    code = (
        "from cirulla.bots.cgroups import HostGroups, describe_host;"
        f"print(describe_host(HostGroups.detect('cirulla-none-{os.getpid()}')))"
    )
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert "\n" not in line
    assert line.startswith("per-bot limits: none") and "cgroup-setup --user" in line
    assert describe_host(HostGroups.detect()).startswith("per-bot limits: control groups v")


def test_a_tournament_bot_has_its_own_limits_and_is_named_when_killed(tmp_path: Path) -> None:
    """``--bot-limits NAME:memory=256M`` (cutechess's per-engine form): the balloon is
    killed at its own limit and the game's notes say so; a bad value is one line."""
    import json

    balloon = Path(__file__).parents[1] / "programs" / "hostile.py"
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--sandbox", "--games", "2"]
    argv += ["--bot", f"balloon=cmd:{{python}} {balloon} balloon", "--bot", "random"]
    done = subprocess.run(
        [*argv, "--bot-limits", "balloon:memory=256M", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    # killed before it joined: a bot that joined none of its games fails the run (b836a64)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "bot balloon joined none of its 2 games" in done.stdout, done.stdout
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    notes = [note for game in games for note in game["notes"]]
    assert sum("(balloon) killed: memory limit 256 MiB" in n for n in notes) == 2, notes
    settings = json.loads((out / "tournament.json").read_text())
    assert settings["bot_limits"]["balloon"].startswith("memory=256M,processes=256,cpu=1")
    for bad, says in (
        ("balloon:memory=lots", "--bot-limits balloon: memory"),
        ("nobody:memory=1G", "NAME:KEY=VALUE"),
    ):
        refused = subprocess.run(
            [*argv, "--bot-limits", bad, "--out", str(tmp_path / "x")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
