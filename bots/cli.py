"""``cirulla bot KIND ...`` (play one seat of a match) and the bots' benchmarks."""

from __future__ import annotations

import argparse
import logging
import sys

from cirulla.bots import benchmarks, enroll
from cirulla.bots.specs import KINDS, make_policy

BOT_DESCRIPTION = """\
Play one seat of a match on a Cirulla server with a built-in bot, as an ordinary
player over the gRPC protocol. Get the match id and a seat token from whoever created
the match (e.g. `cirulla server` + CreateMatch, or `cirulla tournament`). The bot exits 0
when the match ends.

  cirulla bot greedy --server 127.0.0.1:50051 --match M1 --token SEAT-TOKEN
  cirulla bot mcts --server 127.0.0.1:50051 --match M1 --token T --iterations 500

Kinds:
{kinds}
Kind options can also be given as --option key=value (repeatable), the form the
tournament runner uses: `--option iterations=500 --option c=0.7`.
"""


def _kinds_text() -> str:
    lines = []
    for kind in KINDS.values():
        lines.append(f"  {kind.name:8} {kind.summary}")
        for opt in kind.options:
            lines.append(f"             --{opt.name} ({opt.type.__name__}): {opt.help}")
    return "\n".join(lines) + "\n"


def _run_bot(args: argparse.Namespace) -> int:
    from cirulla.bots.kit import BotError, run_bot

    options: dict[str, object] = {}
    kind = KINDS[args.kind]
    try:
        for item in args.option or []:
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"--option takes key=value, got {item!r}")
            options[key.strip().replace("-", "_")] = value
        for opt in KINDS["mcts"].options:
            value = getattr(args, f"opt_{opt.name}", None)
            if value is not None:
                kind.option(opt.name)  # says which options this kind has, if not this one
                options[opt.name] = value
        policy = make_policy(args.kind, options, seed=args.seed)
    except ValueError as exc:
        print(f"cirulla bot: {exc}", file=sys.stderr)
        return 2
    if args.ladder:  # a connect-in bot: a fresh policy for each assigned match
        getattr(policy, "close", lambda: None)()
        return enroll.run_from_args(args, lambda: make_policy(args.kind, options, seed=args.seed))
    if not (args.server and args.match and args.token):
        print("cirulla bot: give --server, --match and --token (or --ladder)", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format=f"%(asctime)s {args.name or args.kind} %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        run_bot(
            policy,
            server=args.server,
            match_id=args.match,
            token=args.token,
            name=args.name or policy.name,
            retries=args.retries,
        )
    except BotError as exc:
        print(f"cirulla bot: {exc}", file=sys.stderr)
        return 1
    finally:
        close = getattr(policy, "close", None)
        if close is not None:
            close()
    return 0


def register(commands: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "bot",
        help="play one seat of a match with a built-in bot (random, greedy, mcts)",
        description=BOT_DESCRIPTION.format(kinds=_kinds_text()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "kind", choices=sorted(KINDS), metavar="KIND", help=f"bot kind: {', '.join(KINDS)}"
    )
    p.add_argument("--server", metavar="HOST:PORT", help="server address")
    p.add_argument("--match", metavar="ID", help="match id to join")
    p.add_argument("--token", help="this seat's secret token")
    p.add_argument("--name", help="name shown to the other players (default: the kind)")
    p.add_argument("--seed", type=int, help="seed: same seed and budget, same moves")
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="kind option in generic form, e.g. iterations=500 (repeatable)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=8,
        help="reconnection attempts after a dropped stream (8, with backoff)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="stderr logging; debug logs every message sent and received",
    )
    enroll.add_ladder_arguments(p)
    group = p.add_argument_group("mcts options")
    for opt in KINDS["mcts"].options:
        group.add_argument(
            f"--{opt.name}",
            dest=f"opt_{opt.name}",
            type=opt.type,
            metavar=opt.name.upper(),
            help=opt.help,
        )
    p.set_defaults(func=_run_bot)
    benchmarks.register(bench)
