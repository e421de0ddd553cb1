"""`cirulla bench server --rounds N`: the loads of this installation's server and of the
baseline's alternate, every round is in the JSON with their medians, and the targets read
the medians (a real `cirulla server` per load run, real client processes)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest

from tests.server_harness import tied_to_this_process

SMALL = ["--matches", "2", "--total", "2", "--target", "11", "--decisions", "20"]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "cirulla", "bench", "server", "--json", *SMALL, *args]
    return subprocess.run(tied_to_this_process(argv), capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_rounds_alternate_with_the_baseline_and_the_targets_read_their_medians() -> None:
    # enough decisions that each kit run's server CPU is several of /proc's 10 ms ticks (48
    # decisions of SMALL, about 0.02 s, sometimes read as 0); the paced runs think 1 ms a
    # decision, not the default 20: what is checked is that their latencies are in every
    # round and their medians read, not how they compare with a bot's thinking (at 20 ms
    # the four paced runs were half the test's time: 18.9 s against 9.0 s alone)
    more = ("--total", "6", "--think-ms", "1")
    done = _bench("--processes", "1", "--rounds", "2", "--baseline-python", sys.executable, *more)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    rounds = report["rounds"]
    assert len(rounds["server"]) == len(rounds["baseline"]) == 2
    assert report["server"] == rounds["server"][0]
    kit_cpu = [r["kit"]["server_cpu_ms_per_decision"] for r in rounds["server"]]
    assert all(cpu > 0 for cpu in kit_cpu)
    medians = report["medians"]
    assert medians["server"]["kit_cpu_ms_per_decision"] == round(statistics.median(kit_cpu), 4)
    p99 = [r["kit_paced"]["latency_ms"]["p99"] for r in rounds["baseline"]]
    assert medians["baseline"]["kit_paced_p99_ms"] == round(statistics.median(p99), 4)
    targets = report["targets"]
    assert (
        targets["server_cpu_ms_per_decision"]["value"]
        == medians["server"]["kit_cpu_ms_per_decision"]
    )
    assert targets["p99_decision_latency_ms"]["value"] == medians["server"]["kit_paced_p99_ms"]


def test_zero_rounds_is_one_line() -> None:
    done = _bench("--rounds", "0")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "cirulla bench server: --matches, --total, --decisions, --processes and --rounds "
        "must be at least 1"
    ]
