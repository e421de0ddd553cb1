"""``cirulla bench tournament``: what a tournament game costs beyond the bots' thinking.

Runs a small random-vs-random tournament on a local server (fresh temporary folder) and
prints one JSON object: wall time per game, which with random bots is almost all
overhead (two Python processes started, gRPC handshake, record fetched).
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from pathlib import Path

from rich.console import Console

from cirulla.clients.journal import Settings
from cirulla.clients.tournament import RunOptions, Tournament


def register_bench(bench: argparse._SubParsersAction) -> None:
    p = bench.add_parser(
        "tournament",
        help="tournament overhead: seconds per game of random vs random on a local server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--games", type=int, default=4, help="games to play (default 4)")
    p.add_argument("--concurrency", type=int, default=2, help="games at a time (default 2)")
    p.add_argument("--target", type=int, default=51, help="game target (default 51)")
    p.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    settings = Settings(
        bots={"r1": "random", "r2": "random"},
        games=args.games,
        seed=1,
        rules={"target": args.target},
    )
    with tempfile.TemporaryDirectory(prefix="cirulla-bench-") as tmp:
        run = RunOptions(out=Path(tmp), concurrency=args.concurrency)
        quiet = Console(file=io.StringIO())
        start = time.monotonic()
        st = Tournament(settings, run, quiet).run()
        seconds = time.monotonic() - start
        played = list(Tournament(settings, run, quiet).done.values())
    per_game = [r.seconds for r in played]
    print(
        json.dumps(
            {
                "benchmark": "tournament",
                "games": st.games,
                "concurrency": args.concurrency,
                "target": args.target,
                "wall_seconds": round(seconds, 3),
                "wall_seconds_per_game": round(seconds / max(st.games, 1), 3),
                "mean_game_seconds": round(sum(per_game) / max(len(per_game), 1), 3),
                "problems": sum(sum(b.problems.values()) for b in st.bots),
            }
        )
    )
    return 0
