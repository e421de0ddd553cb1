"""``cirulla bench ladder``: sustained ladder throughput, embedded and with workers.

What it measures and prints is its --help, ``LADDER_BENCH_DESCRIPTION`` in ``cirulla.ladder.cli``
(where its parser is).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cirulla.ladder.pgtemp import running_server, scratch_database


def _cirulla(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "cirulla", *args],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _quantiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"median": None, "p90": None, "n": 0}
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"median": round(statistics.median(ordered), 3), "p90": round(p90, 3), "n": len(ordered)}


def measure(url: str, workers: int, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    # Imported here: this module is loaded by every `cirulla` start-up to register the bench.
    from cirulla.ladder.db import open_database
    from cirulla.ladder.store import LadderStore

    store = LadderStore(open_database(url))
    for i in range(args.bots):
        store.bots.add_bot(f"r{i}", "random", max_concurrency=workers * args.concurrency)
    procs = [
        _cirulla(
            [
                *("ladder", "serve", "--db", url, "--listen", "127.0.0.1:0"),
                *("--concurrency", "0", "--data", str(folder / "serve")),
                *("--state-file", str(folder / "ladder.json")),
            ],
            folder / "serve.log",
        )
    ]
    for n in range(workers):
        procs.append(
            _cirulla(
                [
                    *("ladder", "worker", "--db", url, "--data", str(folder / f"worker-{n}")),
                    *("--concurrency", str(args.concurrency)),
                ],
                folder / f"worker-{n}.log",
            )
        )
    try:
        time.sleep(args.warmup)
        start = time.time()
        time.sleep(args.seconds)
        end = time.time()
    finally:
        _stop(procs)
    rows = store.views.times()
    store.engine.dispose()
    finished = [
        r
        for r in rows
        if r["status"] == "finished" and r["finished_at"] and start <= r["finished_at"] < end
    ]
    started = [r for r in rows if r["started_at"] and start <= r["started_at"] < end]
    return {
        "workers": workers,
        "matches_per_minute": round(len(finished) * 60.0 / (end - start), 2),
        "finished_in_window": len(finished),
        "latency_scheduled_to_claimed_s": _quantiles(
            [r["claimed_at"] - r["created_at"] for r in started if r["claimed_at"]]
        ),
        "latency_scheduled_to_started_s": _quantiles(
            [r["started_at"] - r["created_at"] for r in started if r["started_at"]]
        ),
    }


def measure_embedded(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """``cirulla ladder serve`` on SQLite with its defaults, random and greedy registered."""
    from cirulla.ladder.db import open_database
    from cirulla.ladder.store import LadderStore

    url = f"sqlite:///{folder / 'ladder.sqlite3'}"
    engine = open_database(url)
    store = LadderStore(engine)
    for name in ("random", "greedy"):
        store.bots.add_bot(name, name)
    state = folder / "cirulla-ladder.json"
    proc = _cirulla(
        [
            *("ladder", "serve", "--db", url, "--listen", "127.0.0.1:0"),
            *("--concurrency", str(args.embedded_concurrency)),
            *("--data", str(folder / "data"), "--state-file", str(state)),
        ],
        folder / "serve.log",
    )
    try:
        deadline = time.monotonic() + 60
        while not state.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the ladder did not start; see {folder / 'serve.log'}")
            time.sleep(0.1)
        time.sleep(args.warmup)
        start = time.time()
        time.sleep(args.seconds)
        end = time.time()
    finally:
        _stop([proc])
    rows = [r for r in store.views.times() if r["status"] == "finished"]
    engine.dispose()
    window = [r for r in rows if r["finished_at"] and start <= r["finished_at"] < end]
    rated = [r for r in window if r["rated"]]
    return {
        "database": "sqlite (embedded, serve's defaults)",
        "bots": "random, greedy",
        "games_at_once": args.embedded_concurrency,
        "rated_games_per_minute": round(len(rated) * 60.0 / (end - start), 2),
        "rated_in_window": len(rated),
        "finished_in_window": len(window),
        "game_seconds": _quantiles(
            [
                r["finished_at"] - r["started_at"]
                for r in window
                if r["started_at"] and r["finished_at"]
            ]
        ),
    }


def run_bench(args: argparse.Namespace) -> int:
    report: dict[str, Any] = {
        "benchmark": "ladder",
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "warmup_s": args.warmup,
        "window_s": args.seconds,
    }
    try:
        counts = [int(x) for x in args.workers.split(",") if x.strip()]
        if any(n < 1 for n in counts):
            raise ValueError("--workers: each count must be at least 1")
        if args.embedded:
            with tempfile.TemporaryDirectory(prefix="cirulla-bench-ladder-") as tmp:
                report["embedded"] = measure_embedded(args, Path(tmp))
        if counts:
            report["postgres"] = bench_workers(counts, args)
    except (OSError, RuntimeError, ValueError) as exc:
        print(f"cirulla bench ladder: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2))
    return 0


def bench_workers(counts: list[int], args: argparse.Namespace) -> dict[str, Any]:
    """Scheduler-only ``serve`` and N workers on PostgreSQL, for each N in ``counts``."""
    from cirulla.ladder.db import database_url

    if args.db:
        database_url(args.db)
    runs = []
    with running_server(args.db) as admin:
        for workers in counts:
            with (
                scratch_database(admin, "bench") as url,
                tempfile.TemporaryDirectory(prefix="cirulla-bench-ladder-") as tmp,
            ):
                runs.append(measure(url, workers, args, Path(tmp)))
    report: dict[str, Any] = {
        "database": (args.db and "postgresql (given)") or "postgresql (throwaway, fsync off)",
        "bots": f"{args.bots} x random",
        "matches_per_worker": args.concurrency,
        "runs": runs,
    }
    if len(runs) >= 2 and runs[0]["matches_per_minute"]:
        report["throughput_ratio_last_to_first"] = round(
            runs[-1]["matches_per_minute"] / runs[0]["matches_per_minute"], 2
        )
    return report
