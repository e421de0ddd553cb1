"""``cirulla bot KIND ...`` (play one seat of a match), ``cirulla match create`` and the
bots' benchmarks."""

from __future__ import annotations

import argparse
import sys

from cirulla.bots import benchmarks, match_cli
from cirulla.bots.specs import KINDS, make_policy
from cirulla.bots.text import cli as text_cli

BOT_DESCRIPTION = """\
Play one seat of a match on a Cirulla server with a built-in bot, as an ordinary
player over the gRPC protocol. Get the match id and a seat token from whoever created
the match (`cirulla match create`, or `cirulla tournament`). The bot exits 0 when the
match ends.

Where to play comes from --server, --match and --token, or else from the environment
variables CIRULLA_SERVER, CIRULLA_MATCH and CIRULLA_TOKEN (and CIRULLA_TLS_CA for TLS),
which the tournament runner sets for every bot. Prefer the environment for the token
(a command line is visible to other local users); on a command line write --token=VALUE.

  cirulla bot greedy --server 127.0.0.1:50051 --match M1 --token=SEAT-TOKEN
  CIRULLA_SERVER=127.0.0.1:50051 CIRULLA_MATCH=M1 CIRULLA_TOKEN=T cirulla bot mcts --iterations 500

Kinds:
{kinds}
Kind options can also be given as --option key=value (repeatable), the form the
tournament runner uses: `--option iterations=500 --option c=0.7`.

Engines in any language (the text protocol, docs/text-protocol.md):
  cirulla bot text [--server ... --match ... --token=...] -- CMD ARGS...
                   play the seat with a text-protocol engine (stdin/stdout)
  cirulla bot check 'text:CMD ARGS...'
                   play a few short games with the engine against random on a
                   local server and report every protocol violation
"""

#: Pseudo-kinds of `cirulla bot` that take a command instead of being a built-in bot.
COMMAND_KINDS = ("text", "check")


def _kinds_text() -> str:
    lines = []
    for kind in KINDS.values():
        lines.append(f"  {kind.name:8} {kind.summary}")
        for opt in kind.options:
            lines.append(f"             --{opt.name} ({opt.type.__name__}): {opt.help}")
    return "\n".join(lines) + "\n"


def _run_bot(args: argparse.Namespace) -> int:
    from cirulla.bots.kit import BotError, run_bot

    if args.kind == "text":
        return text_cli.run_text_bot(args, args.command_line or args.engine)
    if args.kind == "check":
        return text_cli.run_check(args, args.engine)
    if args.engine or args.command_line:
        print(
            f"cirulla bot: unexpected arguments {' '.join(args.engine)!r} "
            f"(only `cirulla bot text -- CMD` takes a command)",
            file=sys.stderr,
        )
        return 2
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
    try:
        run_bot(
            policy,
            server=args.server,
            match_id=args.match,
            token=args.token,
            name=args.name or policy.name,
            retries=args.retries,
            tls_ca=args.tls_ca,
            join_timeout=args.join_timeout,
            log_level=args.log_level,
        )
    except BotError as exc:
        print(f"cirulla bot: {exc}", file=sys.stderr)
        return 1
    finally:
        close = getattr(policy, "close", None)
        if close is not None:
            close()
    return 0


def add_connection_arguments(p: argparse.ArgumentParser) -> None:
    """--server, --match, --token, --tls-ca, --name, --retries, --join-timeout,
    --log-level: what every way of playing a seat takes (built-in kinds, text engines)."""
    p.add_argument(
        "--server", metavar="HOST:PORT", help="server address (default: $CIRULLA_SERVER)"
    )
    p.add_argument("--match", metavar="ID", help="match id to join (default: $CIRULLA_MATCH)")
    p.add_argument(
        "--token",
        metavar="TOKEN",
        help="this seat's secret token (default: $CIRULLA_TOKEN); write --token=VALUE",
    )
    p.add_argument(
        "--tls-ca",
        metavar="PEM",
        help="connect with TLS, checking the server against this CA certificate "
        "(default: $CIRULLA_TLS_CA; neither: plaintext)",
    )
    p.add_argument("--name", help="name shown to the other players (default: the kind)")
    p.add_argument(
        "--retries",
        type=int,
        default=8,
        help="reconnection attempts after a dropped stream (8, with backoff)",
    )
    p.add_argument(
        "--join-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="give up if no game starts this long after joining (default 600)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="stderr logging; debug logs every message sent and received",
    )


def register(commands: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "bot",
        help="play one seat of a match with a built-in bot (random, greedy, mcts)",
        description=BOT_DESCRIPTION.format(kinds=_kinds_text()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "kind",
        choices=sorted(KINDS) + list(COMMAND_KINDS),
        metavar="KIND",
        help=f"bot kind: {', '.join(KINDS)}; or text / check (below)",
    )
    p.add_argument(
        "engine",
        nargs="*",
        metavar="CMD",
        help="text: the engine's command line, after --; check: the engine spec",
    )
    add_connection_arguments(p)
    p.add_argument("--seed", type=int, help="seed: same seed and budget, same moves")
    p.add_argument(
        "--games",
        type=int,
        choices=range(1, 5),
        metavar="N",
        help="check: play only the first N of the 4 check games",
    )
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="kind option in generic form, e.g. iterations=500 (repeatable)",
    )
    group = p.add_argument_group("mcts options")
    for opt in KINDS["mcts"].options:
        group.add_argument(
            f"--{opt.name}",
            dest=f"opt_{opt.name}",
            type=opt.type,
            metavar=opt.name.upper(),
            help=opt.help,
        )
    p.set_defaults(func=_run_bot, command_line=None)
    match_cli.register(commands)
    text_cli.register_engine(commands)
    benchmarks.register(bench)
