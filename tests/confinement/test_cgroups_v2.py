"""The control groups v2 code path of ``cirulla.bots.cgroups``, against a temporary folder
laid out like a v2 tree: this machine and CI run v1 (docs/ladder.md, "Per-bot limits"),
so the files v2 reads and writes (``cgroup.controllers``, ``cgroup.subtree_control``,
``memory.max``, ``pids.max``, ``cpu.max``, ``memory.events``, ``cpu.stat`` with
``throttled_usec``, ``cgroup.threads``, ``cgroup.kill``) are checked here by name and
content. What a real kernel does with them (an OOM kill inside the group, a refused fork)
is not: tests/confinement/test_limits.py checks that on v1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cirulla.bots import cgroups
from cirulla.bots.cgroups import MIB, BotLimits, HostGroups, Throttling, describe_host


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A v2 tree at ``tmp_path`` (the only cgroup mount), its root's controllers listed,
    and the delegated folder made and owned by this user as an operator would."""
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma\n")
    (tmp_path / "cirulla").mkdir()
    monkeypatch.setattr(cgroups, "_mounts", lambda: [(str(tmp_path), "cgroup2", "rw,nsdelegate")])
    monkeypatch.delenv(cgroups.BASE_ENV, raising=False)
    return tmp_path


def test_v2_is_detected_and_its_controllers_enabled_for_the_children(tree: Path) -> None:
    host = HostGroups.detect()
    assert isinstance(host, HostGroups), host
    assert host.version == 2
    assert set(host.bases.values()) == {tree / "cirulla"}  # one folder for the three
    assert (tree / "cirulla" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert describe_host(host) == f"per-bot limits: control groups v2 under {tree / 'cirulla'}"
    run = host.new_run()
    (path,) = set(run.paths.values())
    assert path.parent == tree / "cirulla" and path.name.startswith(f"run-{os.getpid()}-")
    assert (path / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


def test_v2_without_every_controller_says_which_is_missing(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree / "cgroup.controllers").write_text("memory pids\n")
    said = HostGroups.detect()
    assert said == "control groups: the host has no memory, pids, cpu controller (v1 or v2)"


def test_a_v2_bot_group_writes_its_limits_and_reads_what_hit_it(tree: Path) -> None:
    host = HostGroups.detect()
    assert isinstance(host, HostGroups)
    run = host.new_run()
    limits = BotLimits(memory_bytes=300 * MIB, processes=40, cpu=0.5)
    group = run.bot("some bot/../x", limits)
    (leaf,) = set(group.paths.values())
    assert leaf.parent == run.paths["memory"] and leaf.name.startswith("some_bot_.._x-1-")
    assert (leaf / "memory.max").read_text() == str(300 * MIB)
    assert (leaf / "memory.swap.max").read_text() == "0"
    assert (leaf / "pids.max").read_text() == "40"
    assert (leaf / "cpu.max").read_text() == "50000 100000"

    # the preexec step writes the new process's pid to the one cgroup.procs of v2 (a
    # file the kernel makes in every group)
    (leaf / "cgroup.procs").write_text("")
    group.joiner()()
    assert (leaf / "cgroup.procs").read_text() == str(os.getpid())

    assert group.limit_hit() is None
    (leaf / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert group.limit_hit() == "memory limit 300 MiB"
    (leaf / "memory.events").write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
    (leaf / "pids.events").write_text("max 3\n")
    assert group.limit_hit() == "process limit 40"

    (leaf / "memory.peak").write_text(f"{200 * MIB}\n")
    assert group.memory_peak() == 200 * MIB
    (leaf / "cpu.stat").write_text(
        "usage_usec 9000000\nuser_usec 8000000\nsystem_usec 1000000\n"
        "nr_periods 50\nnr_throttled 40\nthrottled_usec 3500000\n"
    )
    assert group.cpu_throttling() == Throttling(50, 40, 3.5)
    assert group.cpu_throttling().seconds == 3.5
    assert group.cpu_throttling().held_back()
    (leaf / "cgroup.threads").write_text(f"{os.getpid()}\n")
    assert group.threads() == [os.getpid()]
    demand = cgroups.CpuDemand()
    demand.sample(group)  # this process's own run and wait time, from /proc
    assert demand.seconds > 0

    # kill: v2 writes cgroup.kill where the kernel has it (5.14 on)
    (leaf / "cgroup.kill").write_text("")
    (leaf / "cgroup.procs").write_text("")
    group.kill()
    assert (leaf / "cgroup.kill").read_text() == "1"


def test_throttling_counts_a_game_and_tells_a_burner_from_a_burst() -> None:
    before, after = Throttling(100, 2, 0.5), Throttling(160, 52, 4.5)
    assert after - before == Throttling(60, 50, 4.0)
    assert (after - before).held_back()
    # a start-up's burst of threads: throttled in a few periods only
    assert not Throttling(200, 5, 0.3).held_back()
    assert not Throttling(0, 0, 0.0).held_back()
