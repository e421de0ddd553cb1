"""``cirulla bench tournament``, as a user runs it: both modes play every game on a real
local server with real bot processes, and the JSON's figures agree with each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from cirulla.clients.tournament.bench import ChildCpu


@pytest.mark.slow
def test_bench_tournament_reports_both_modes_and_their_cpu() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cirulla", "bench", "tournament", "--games", "4", "--target", "11"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["bots"] == ["random", "greedy"] and result["concurrency"] == 2
    for mode in ("served", "per_game"):
        run = result[mode]
        assert run["games"] == 4 and run["problems"] == 0
        assert abs(run["games_per_second"] - 4 / run["wall_seconds"]) < 0.01
        cpu = run["cpu_seconds"]
        # the server and the bots run in child processes, all waited for by the end
        assert cpu["runner"] > 0 and cpu["server_and_bots"] > 0
        total = cpu["runner"] + cpu["server_and_bots"]
        assert abs(run["cpu_seconds_per_game"] - total / 4) < 0.001
        assert 0 < run["cores_busy"] <= (os.cpu_count() or 1) + 0.5
        # ... and apart: the server's process and the bots', read from /proc as they ran
        by = run["cpu_seconds_per_game_by_process"]
        assert by["server"] > 0 and by["bots"] > 0 and by["runner"] > 0
        assert abs(sum(by.values()) - run["cpu_seconds_per_game"]) < 0.002
        assert -0.01 < by["unattributed"] < 0.5 * (by["server"] + by["bots"])
    # a process per seat and game starts 8 bot processes where the served mode starts 2
    assert (
        result["per_game"]["cpu_seconds"]["server_and_bots"]
        > (result["served"]["cpu_seconds"]["server_and_bots"])
    )
    served, per_game = result["served"], result["per_game"]
    assert result["speedup"] == round(served["games_per_second"] / per_game["games_per_second"], 2)
    # its baseline from the same run: the same bots and deck seeds in process
    local = result["in_process"]
    assert local["games"] == 4 and local["deals"] >= 4 and local["cpu_seconds_per_game"] > 0
    versus = result["cpu_per_game_vs_in_process"]
    assert versus["tournament_cpu_seconds_per_game"] == served["cpu_seconds_per_game"]
    assert versus["ratio"] == round(
        served["cpu_seconds_per_game"] / local["cpu_seconds_per_game"], 1
    )
    assert versus["met"] == (versus["ratio"] <= versus["target"])
    # and the least any server and bots on this stack could cost: a bare gRPC round trip
    # per decision (36 a deal), server and client CPU both counted
    floor = result["transport_floor"]
    assert floor["decisions_per_game"] == round(local["deals"] * 36 / 4, 1)
    echo = floor["echo"]
    assert echo["round_trips"] >= floor["decisions_per_game"] * 4 - echo["streams"]
    assert echo["server_cpu_s"] > 0 and echo["client_cpu_s"] > 0
    assert floor["cpu_ms_per_round_trip"] == pytest.approx(
        echo["server_cpu_ms_per_round_trip"] + echo["client_cpu_ms_per_round_trip"], abs=1e-3
    )
    assert floor["cpu_seconds_per_game"] == pytest.approx(
        floor["cpu_ms_per_round_trip"] * floor["decisions_per_game"] / 1000, rel=0.01, abs=1e-4
    )
    # a floor: the real server and bots, doing the same round trips and more, cost more
    assert floor["cpu_seconds_per_game"] < served["cpu_seconds_per_game"]
    assert floor["floor_ratio"] == pytest.approx(
        floor["cpu_seconds_per_game"] / local["cpu_seconds_per_game"], rel=0.05
    )
    assert floor["target_reachable"] == (floor["floor_ratio"] <= versus["target"])


def test_a_child_caught_between_fork_and_exec_is_still_counted_as_what_it_becomes() -> None:
    """``ChildCpu`` names a process by its command line; read while the child has forked
    but not yet exec'd, it shows the runner's own, and the server's CPU went to nobody
    (a CI run once reported the server's share as 0.0). It is read again until it names
    a server or a bot."""
    with ChildCpu(interval=0.02) as children:
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(0.3)", "cirulla server"],
            preexec_fn=lambda: time.sleep(0.3),  # the window between fork and exec
        )
        child.wait(timeout=30)
    assert children.kind[child.pid] == "server"
