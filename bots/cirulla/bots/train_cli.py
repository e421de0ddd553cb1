"""``cirulla train``: train the ``learned`` bot's network (``cirulla.bots.train``).

Registering imports nothing heavy: NumPy (the ``train`` extra) is imported only when the
command runs, so ``cirulla --help`` works without it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from cirulla.bots.simple import GreedyPolicy
from cirulla.bots.train_config import DEFAULTS, TrainConfig, check_config
from cirulla.rules.game import Game
from cirulla.rules.options import Options

DESCRIPTION = """\
Train the learned bot's network in NumPy, on one core, on games to 51 against greedy and
self-play: by expert iteration (the default: an mcts teacher plays and labels, the network
learns the differences between its root actions' values) or by deep Monte-Carlo
(DouZero's method: the network plays epsilon-greedy and learns the rest of each deal's
point difference). Prints one JSON
line of progress per chunk of games on stderr and a JSON summary (with the weights'
SHA-256) on stdout. Seeded: the same command gives the same weights.

The committed weights (bots/cirulla/bots/data/learned.npz) were made with the defaults:
  cirulla train --out bots/cirulla/bots/data/learned.npz
(--games 15000 --seed 0 --teacher mcts:iterations=400: expert iteration, about 45
minutes on one core). Deep Monte-Carlo instead: --teacher none.
Play them with the bot kind `learned`; other weights with learned:weights=PATH.
"""


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    b = bench.add_parser(
        "learned",
        help="the learned bot's CPU time per decision (one core; JSON)",
        description="Plays games of the learned bot against greedy in process and times "
        "each of the learned bot's decisions with a choice (this thread's CPU time: "
        "features, the greedy appraisal it reads, the network). Prints JSON; the target "
        "is under 2 ms a move. Strength is `cirulla bench strength --a learned`.",
    )
    b.add_argument("--games", type=int, default=20, help="games to 51 (default 20)")
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--weights", default=None, help="a weights file (default: the shipped one)")
    b.add_argument(
        "--endgame",
        default="sampled",
        help="the end of a deal: sampled (the last round solved, the round before over "
        "sampled deals: the default), exact (the last round only) or network",
    )
    b.add_argument(
        "--teacher",
        default=None,
        metavar="MCTS_SPEC",
        help="instead of timing: the bot's regret against this search (e.g. "
        "mcts:iterations=400) by kind of decision, the search playing against greedy",
    )
    b.add_argument("--json", action="store_true", help="print JSON (the default)")
    b.set_defaults(func=cmd_bench_learned)

    p = commands.add_parser(
        "train",
        help="train the learned bot's network (deep Monte-Carlo, NumPy; JSON progress)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", required=True, help="where to write the weights (.npz)")
    p.add_argument("--games", type=int, default=DEFAULTS["games"], help="training games")
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    p.add_argument("--hidden", type=int, default=DEFAULTS["hidden"], help="first layer width")
    p.add_argument("--hidden2", type=int, default=DEFAULTS["hidden2"], help="second layer width")
    p.add_argument("--epsilon", type=float, default=DEFAULTS["epsilon"], help="exploration rate")
    p.add_argument("--chunk", type=int, default=DEFAULTS["chunk"], help="games played between fits")
    p.add_argument("--epochs", type=int, default=DEFAULTS["epochs"], help="passes over each chunk")
    p.add_argument("--batch", type=int, default=DEFAULTS["batch"], help="minibatch size")
    p.add_argument("--lr", type=float, default=DEFAULTS["lr"], help="Adam's first step size")
    p.add_argument("--lr-end", type=float, default=DEFAULTS["lr_end"], help="step size at the end")
    p.add_argument(
        "--opponents",
        default=DEFAULTS["opponents"],
        help="opponent mix: NAME=WEIGHT,... of greedy, self, random "
        f"(default {DEFAULTS['opponents']})",
    )
    p.add_argument(
        "--target", type=int, default=DEFAULTS["target"], help="points a game is played to"
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop after this wall time even if games remain (not reproducible)",
    )
    p.add_argument(
        "--teacher",
        default=DEFAULTS["teacher"],
        help="expert iteration: the mcts spec that plays the labelled seats and whose root "
        "actions' mean rewards the network learns (default "
        f"{DEFAULTS['teacher']}); none: deep Monte-Carlo, the network plays and learns "
        "the rest of each deal's point difference",
    )
    p.add_argument(
        "--student",
        type=float,
        default=DEFAULTS["student"],
        help="expert iteration: the chance that a labelled decision is played by the "
        "network being trained instead of the teacher (DAgger: it then learns the positions "
        f"its own play leads to; default {DEFAULTS['student']})",
    )
    p.add_argument(
        "--features",
        type=int,
        default=DEFAULTS["features"],
        help="the network's inputs: 1 (the default, the shipped weights' layout) or 2, "
        "which adds the belief over the opponent's hidden hand from its plays this round",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_train)


def cmd_train(args: argparse.Namespace) -> int:
    # One core: BLAS threads would fight the other work on the machine and change the
    # floating-point order (the weights would differ from run to run).
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    from cirulla.bots.train import print_progress, train

    config = TrainConfig(
        games=args.games,
        seed=args.seed,
        hidden=args.hidden,
        hidden2=args.hidden2,
        epsilon=args.epsilon,
        chunk=args.chunk,
        epochs=args.epochs,
        batch=args.batch,
        lr=args.lr,
        lr_end=args.lr_end,
        opponents=args.opponents,
        target=args.target,
        minutes=args.minutes,
        teacher=None if args.teacher.strip().lower() == "none" else args.teacher,
        student=args.student,
        features=args.features,
    )
    check_config(config)  # ValueError: one line, exit 2 (cirulla.cli)
    out = Path(args.out)
    if out.suffix != ".npz":
        raise ValueError(f"--out {args.out}: the weights file must end in .npz")
    summary = train(config, out, None if args.quiet else print_progress)
    print(json.dumps(summary, indent=2))
    return 0


def cmd_bench_learned(args: argparse.Namespace) -> int:
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    if args.games < 1:
        raise ValueError(f"--games must be at least 1, not {args.games}")

    from cirulla.bots.learned import LearnedPolicy

    bot = LearnedPolicy(weights=args.weights, endgame=args.endgame)  # checks both
    if args.teacher is not None:
        from cirulla.bots.regret import teacher_regret
        from cirulla.bots.train import make_teacher

        make_teacher(args.teacher, seed=0).close()  # a bad spec: one line, before any game
        report = teacher_regret(args.teacher, args.games, args.seed, args.weights, args.endgame)
        print(json.dumps(report, indent=2))
        return 0
    greedy = GreedyPolicy()
    options = Options.preset("standard", players=2, target=51)
    times: list[float] = []
    for g in range(args.games):
        game = Game(options, seed=args.seed * 1_000_003 + g)
        while (seat := game.to_move) is not None:
            legal = game.legal_actions()
            view = game.view(seat)
            if seat == g % 2:
                start = time.thread_time()
                choice = bot.choose(view, legal, None)
                if len(legal) > 1:
                    times.append(time.thread_time() - start)
            else:
                choice = greedy.choose(view, legal, None)
            game.apply(legal[choice], seat)
    times.sort()
    ms = [1000 * t for t in times]
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    result = {
        "benchmark": "learned",
        "weights": args.weights or "shipped",
        "endgame": args.endgame,
        "games": args.games,
        "decisions": len(ms),
        "mean_ms": round(sum(ms) / len(ms), 3),
        "median_ms": round(ms[len(ms) // 2], 3),
        "p99_ms": round(p99, 3),
        "max_ms": round(ms[-1], 3),
        "target_ms": 2.0,
        "target_met": p99 < 2.0,
    }
    print(json.dumps(result, indent=2))
    return 0
