"""`cirulla bench soak --json` (issue 12, "keep it tested"): a short run still reports the
decision round trip and the server's memory and CPU, and every match finishes."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.server_harness import tied_to_this_process


def test_a_short_soak_reports_latency_and_server_memory() -> None:
    argv = [sys.executable, "-m", "cirulla", "bench", "soak", "--json"]
    argv += ["--concurrency", "2", "--total", "3", "--processes", "1"]
    done = subprocess.run(tied_to_this_process(argv), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert (report["finished"], report["failed"], report["stream_errors"]) == (3, 0, {})
    assert report["decisions"] > 0
    rtt = report["decision_rtt_ms"]
    assert 0 < rtt["p50"] <= rtt["p99"] <= rtt["max"]
    memory = report["server_rss_mib"]
    assert 0 < memory["start"] <= memory["peak"] and memory["end"] <= memory["peak"]
    assert report["server_cpu_s"] > 0
    # one client address creates every match: the server's creation rate is lifted, or a
    # fast soak's matches past the burst were refused (RESOURCE_EXHAUSTED, a traceback)
    command = report["server_command"]
    assert command[0] == "server"
    assert command[command.index("--create-rate") + 1] == "1000000"
    assert command[command.index("--create-burst") + 1] == "1000000"
