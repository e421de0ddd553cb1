"""``cirulla bench pool``: one tournament played here and on the worker pool.

What it measures and prints is its --help, ``POOL_BENCH_DESCRIPTION`` in ``cirulla.ladder.cli``
(where its parser is).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cirulla.ladder.bench import _cirulla, _stop
from cirulla.ladder.pgtemp import PostgresMissing, running_server, scratch_database


def _tournament(args: list[str]) -> float:
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "cirulla", "tournament", *args],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.monotonic() - start


def _results(out: Path) -> dict[int, tuple[Any, ...]]:
    lines = (out / "games.jsonl").read_text(encoding="utf-8").splitlines()
    games = [json.loads(line) for line in lines if line.strip()]
    return {g["index"]: (g["winner"], g["totals"], g["deals"], g["seat_outcomes"]) for g in games}


def measure(url: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    from sqlalchemy import select

    from cirulla.ladder.db import open_database
    from cirulla.ladder.schema import workers

    at_once = args.workers * args.concurrency
    # the bots' seeds fixed too (a run draws its own otherwise: the games would differ)
    base = ["--bot", "random", "--bot", "greedy", "--games", str(args.games), "--seed", "1"]
    base += ["--bot-seed", "1"]
    base += ["--concurrency", str(at_once)]
    local_s = _tournament([*base, "--out", str(folder / "local")])
    engine = open_database(url)
    procs = []
    try:
        for n in range(args.workers):
            worker = ["ladder", "worker", "--db", url, "--data", str(folder / f"worker-{n}")]
            worker += ["--concurrency", str(args.concurrency)]
            procs.append(_cirulla(worker, folder / f"worker-{n}.log"))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                if len(conn.execute(select(workers.c.id)).all()) >= args.workers:
                    break
            time.sleep(0.2)
        pool_s = _tournament([*base, "--out", str(folder / "pool"), "--db", url])
    finally:
        _stop(procs)
        engine.dispose()
    return {
        "local_s": round(local_s, 2),
        "pool_s": round(pool_s, 2),
        "pool_over_local": round(pool_s / local_s, 2),
        "same_results": _results(folder / "local") == _results(folder / "pool"),
    }


def run_bench(args: argparse.Namespace) -> int:
    try:
        with (
            running_server(args.db) as admin,
            scratch_database(admin, "bench") as url,
            tempfile.TemporaryDirectory(prefix="cirulla-bench-pool-") as tmp,
        ):
            figures = measure(url, args, Path(tmp))
    except (PostgresMissing, RuntimeError, ValueError, OSError) as exc:
        print(f"cirulla bench pool: {exc}", file=sys.stderr)
        return 2
    report = {
        "benchmark": "pool",
        "tournament": f"random vs greedy, {args.games} games, seed 1, bot seed 1",
        "workers": args.workers,
        "games_per_worker": args.concurrency,
        "cpus": os.cpu_count(),
        **figures,
    }
    print(json.dumps(report, indent=2))
    return 0
