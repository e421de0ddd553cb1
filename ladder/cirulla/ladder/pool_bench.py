"""``cirulla bench pool``: one tournament played here and on the worker pool.

The same tournament (random against greedy, fixed seed) is played twice in one run:
by a local ``cirulla tournament`` (its own server and bots) and by ``cirulla tournament
--db`` with N ``cirulla ladder worker`` processes on a fresh PostgreSQL database (a
throwaway cluster started here unless ``--db`` names a server). Prints one JSON object:
the wall time of each, their ratio and whether the per-game results are identical. All
processes share this machine, so the ratio shows the pool's overhead (claims, polling,
results through the database), not the speed-up of more machines.
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


def register_bench(bench: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench.add_parser(
        "pool",
        help="a tournament played locally and on N ladder workers (PostgreSQL): time, same results",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--db",
        metavar="URL",
        help="a PostgreSQL server to use (a database is created and dropped there); "
        "default: start a throwaway one",
    )
    p.add_argument("--games", type=int, default=20, help="games of the tournament (default 20)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument(
        "--concurrency", type=int, default=1, help="games per worker; the runner and the "
        "local run play workers x concurrency games at once (default 1)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="JSON only (the default output too)")
    p.set_defaults(func=run_bench)


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
    base = ["--bot", "random", "--bot", "greedy", "--games", str(args.games), "--seed", "1"]
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
        "tournament": f"random vs greedy, {args.games} games, seed 1",
        "workers": args.workers,
        "games_per_worker": args.concurrency,
        "cpus": os.cpu_count(),
        **figures,
    }
    print(json.dumps(report, indent=2))
    return 0
