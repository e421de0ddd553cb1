"""``cirulla bench mcts`` and ``cirulla bench strength``: each prints one JSON object."""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from typing import Any

from cirulla.bots.botspec import BotSpec
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.search_defaults import DEFAULT_C
from cirulla.bots.strength import run_strength
from cirulla.rules.core import CORE, CoreUnavailableError, resolve_core
from cirulla.rules.game import Game
from cirulla.rules.options import Options


def mcts_speed(
    iterations: int, players: int, seed: int, repeats: int, c: float, core: str | None = None
) -> dict[str, Any]:
    """ISMCTS iterations per second from the opening position of a deal, on one core.

    Per wall second and per CPU second of this process (the CPU figure is what one core
    does, however busy the machine is).
    """
    rates, cpu_rates = [], []
    for r in range(repeats):
        game = Game(Options(players=players), seed=seed + r, deal_only=True)
        seat = game.to_move
        view = game.view(seat)
        cpu = time.process_time()
        result = search(view, seed + r, SearchConfig(iterations=iterations, c=c, core=core))
        cpu = time.process_time() - cpu
        rates.append(result.iterations / result.seconds)
        cpu_rates.append(result.iterations / cpu if cpu > 0 else math.inf)
    return {
        "core": resolve_core(core),
        "iterations_per_run": iterations,
        "runs": repeats,
        "iterations_per_second": statistics.median(rates),
        "iterations_per_cpu_second": statistics.median(cpu_rates),
        "iterations_per_second_runs": [round(x, 1) for x in rates],
    }


def _bench_mcts(args: argparse.Namespace) -> int:
    cores = [args.core] if args.core != "both" else ["native", "python"]
    if args.core == "both" and CORE != "native":
        cores = ["python"]
    try:
        runs = {
            core: mcts_speed(
                args.native_iterations if core == "native" else args.iterations,
                args.players,
                args.seed,
                args.runs,
                args.c,
                core,
            )
            for core in cores
        }
    except CoreUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    first = runs[cores[0]]
    report: dict[str, Any] = {
        "benchmark": "mcts",
        "position": "opening of a deal (first decision), a full deal left to play out",
        "players": args.players,
        "cores_used": 1,
        "core": first["core"],
        "iterations_per_second": first["iterations_per_second"],
        "cores": runs,
        "goal": {"native": 30000, "python": 2000},
    }
    if len(runs) == 2:
        report["native_over_python"] = round(
            runs["native"]["iterations_per_cpu_second"]
            / runs["python"]["iterations_per_cpu_second"],
            1,
        )
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


def _bench_strength(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    report = run_strength(
        BotSpec.parse(args.a),  # the specs enter here
        BotSpec.parse(args.b),
        args.games,
        players=args.players,
        target=args.target,
        seed=args.seed,
        jobs=args.jobs,
        preset=args.preset,
        base=None if args.base is None else BotSpec.parse(args.base),
    )
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


def register(bench: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench.add_parser(
        "mcts",
        help="ISMCTS iterations per second from a deal's opening position (one core)",
        description="Run ISMCTS from the first decision of a deal and report iterations per "
        "second on one core (median over --runs), for the native and the Python search loop "
        "side by side. Goals: native at least 30,000, python at least 2,000.",
    )
    p.add_argument(
        "--iterations", type=int, default=4000, help="iterations per run, python core (4000)"
    )
    p.add_argument(
        "--native-iterations",
        type=int,
        default=40000,
        help="iterations per run, native core (40000)",
    )
    p.add_argument(
        "--core",
        choices=("both", "native", "python"),
        default="both",
        help="search loop to measure; both (default) runs native then python in one run",
    )
    p.add_argument("--runs", type=int, default=3, help="runs from different deals (3)")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players (2)")
    p.add_argument("--seed", type=int, default=1, help="seed of the deals and the search (1)")
    p.add_argument("--c", type=float, default=DEFAULT_C, help="UCB exploration constant")
    p.add_argument("--json", action="store_true", help="print compact one-line JSON")
    p.set_defaults(func=_bench_mcts)

    s = bench.add_parser(
        "strength",
        help="bot A against bot B on duplicate deals: win rate, point difference, 95%% CIs",
        description="Play bot A against bot B to the target, every deck sequence once per "
        "seating (duplicate deals), in process (policies called through the rules core, not "
        "over gRPC). Reports A's game win rate (Wilson 95% CI) and A's mean point difference "
        "per deal (paired by deck sequence, normal 95% CI). Bots are specs like greedy, "
        "random or mcts:iterations=1000,c=0.7.",
    )
    s.add_argument("--a", required=True, metavar="SPEC", help="bot A, e.g. mcts:iterations=1000")
    s.add_argument("--b", required=True, metavar="SPEC", help="bot B, e.g. greedy")
    s.add_argument(
        "--games",
        type=int,
        default=100,
        help="games to play (rounded up to whole duplicate groups; default 100)",
    )
    s.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players (2)")
    s.add_argument("--target", type=int, default=51, help="points to win a game (51)")
    s.add_argument("--preset", default="standard", help="rule preset (standard)")
    s.add_argument("--seed", type=int, default=0, help="seed of the deck orders and bots (0)")
    s.add_argument("--jobs", type=int, default=1, help="games played in parallel processes (1)")
    s.add_argument(
        "--base",
        metavar="SPEC",
        help="also play this bot against B on the very same games and report A minus base "
        "per duplicate group (a paired comparison: finer than two separate runs)",
    )
    s.add_argument("--json", action="store_true", help="print compact one-line JSON")
    s.set_defaults(func=_bench_strength)
