"""``cirulla bench env``, the environments' benchmark. Its parser is here, outside the
``cirulla.env`` package: importing that package registers the Gymnasium id, which imports
Gymnasium and NumPy (0.3 s of CPU that every ``cirulla --help`` paid). NumPy and the rest
of the ``env`` extra are imported only when the benchmark runs, so ``cirulla --help``
works without them.
"""

from __future__ import annotations

import argparse
import json

from cirulla.extras import install_hint
from cirulla.rules.arguments import add_rule_arguments, options_from_args


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    del commands  # no top-level command: the environments are a library
    p = bench.add_parser(
        "env",
        help="agent steps per second: batched environment, per-step API, Game API (one core)",
        description="Random-policy agent steps per second, observations and masks included: "
        "the batched environment, the per-step API and the same loop through the Game API, "
        "measured in one run; prints JSON.",
    )
    add_rule_arguments(p)
    p.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per loop (default 3)")
    p.add_argument("--num-envs", type=int, default=256, help="games per batch (default 256)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--no-openspiel",
        action="store_true",
        help="skip the OpenSpiel loops (python_cirulla in both chance modes and its baseline)",
    )
    p.add_argument("--json", action="store_true", help="print JSON (the default; kept for scripts)")
    p.set_defaults(func=cmd_bench_env)


def cmd_bench_env(args: argparse.Namespace) -> int:
    try:
        from cirulla.env.bench import bench_env
    except ImportError as exc:
        missing = exc.name or str(exc)
        print(f"cirulla bench env: error: {missing} is missing: {install_hint('env')}")
        return 2
    if args.num_envs < 1 or args.seconds <= 0:
        print("cirulla bench env: error: --num-envs and --seconds must be positive")
        return 2
    result = bench_env(
        options_from_args(args),
        args.seconds,
        args.num_envs,
        args.seed,
        openspiel=not args.no_openspiel,
    )
    print(json.dumps(result, indent=2))
    return 0
