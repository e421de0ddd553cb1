"""``cirulla bot KIND ...`` (play one seat of a match), ``cirulla match create`` and the
bots' benchmarks."""

from __future__ import annotations

import argparse
import copy
import sys

from cirulla.bots import benchmarks, enroll, match_cli
from cirulla.bots.seat_args import (
    add_connection_arguments,
    add_kind_arguments,
    play_seat,
    policy_from_args,
)
from cirulla.bots.specs import KINDS
from cirulla.bots.text import cli as text_cli
from cirulla.extras import require

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

Or sit on a ladder as a connect-in bot (docs/ladder.md) and play every match it assigns,
the bot key in $CIRULLA_BOT_KEY or --bot-key-file:
  cirulla bot greedy --ladder 127.0.0.1:50061 --bot-name NAME

Kinds:
{kinds}
Kind options can also be given as --option key=value (repeatable), the form the
tournament runner uses: `--option iterations=500 --option c=0.7`.

Engines in any language (the text protocol, docs/text-protocol.md):
  cirulla bot text [--server ... --match ... --token=...] -- CMD ARGS...
                   play the seat with a text-protocol engine (stdin/stdout)
  cirulla bot text --ladder ADDR --bot-name NAME [--bot-key-file FILE] -- CMD ARGS...
                   the engine as a connect-in ladder bot: every match it is assigned
  cirulla bot check 'text:CMD ARGS...'
                   play a few short games with the engine against random on a
                   local server and report every protocol violation
"""

#: Pseudo-kinds of `cirulla bot` that take a command instead of being a built-in bot.
COMMAND_KINDS = ("text", "check")

TEXT_DESCRIPTION = """\
Play one seat of a match with a text-protocol engine: a program in any language that
reads commands on stdin and answers on stdout (docs/text-protocol.md). The engine's
command line comes after --. Where to play comes from --server, --match and --token, or
else from CIRULLA_SERVER, CIRULLA_MATCH and CIRULLA_TOKEN; exits 0 when the match ends.

  cirulla bot text --server 127.0.0.1:50051 --match M1 --token=SEAT-TOKEN -- ./my-engine -v
  CIRULLA_BOT_KEY=KEY cirulla bot text --ladder 127.0.0.1:50061 --bot-name NAME -- ./my-engine

In a tournament the engine is --bot NAME='text:./my-engine -v'; check it first with
cirulla bot check 'text:./my-engine -v'.
"""

CHECK_DESCRIPTION = """\
Check a text-protocol engine (docs/text-protocol.md, "Checking an engine"): start a
local server, play four short games with the engine against random (2 players in both
seats, then 3 and 4 players) and print every protocol violation with the exchange that
showed it, then PASS (exit 0) or FAIL (exit 1). SPEC is what a tournament's --bot takes
(`text:` may be left out; {python} is this interpreter). The engine runs under the limits
of a ladder or a tournament's --sandbox. Needs the server extra.

  cirulla bot check 'text:./my-engine --level 3'
  cirulla bot check --games 1 'text:{python} my_engine.py'
  cirulla bot check --limits memory=4G,cpu=2 'text:java -cp ./classes TextEngine'
"""

#: `cirulla bot text --help` and `bot check --help`: the usage, the description and the
#: options each form reads (the `dest` of each), not every built-in kind's options.
FORM_HELP: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "text": (
        "cirulla bot text [--server HOST:PORT] [--match ID] [--token=TOKEN] [options] "
        "-- CMD [ARGS ...]",
        TEXT_DESCRIPTION,
        (
            *("server", "match", "token", "tls_ca", "name", "retries", "join_timeout"),
            *("log_level", "ladder", "bot_name", "bot_key_file", "capacity", "reenroll_max"),
            *("memory_limit", "cpu_limit", "processes", "command_timeout"),
        ),
    ),
    "check": (
        "cirulla bot check [--games N] [--memory SIZE] [--processes N] [--cpu CORES] "
        "[--limits KEY=VALUE,...] SPEC",
        CHECK_DESCRIPTION,
        ("games", "memory", "processes", "cpu", "limits"),
    ),
}


#: An option's help where the shared one speaks of another form (or of the built-in kinds).
FORM_OPTION_HELP = {
    ("text", "name"): "name shown to the other players (default: the engine's answer to `name`)",
    ("text", "processes"): "processes and threads of the engine's user (RLIMIT_NPROC; not "
    "enforced for root; default 1024)",
    ("check", "processes"): "the engine's processes and threads, in its control group "
    "(default 256)",
}


class _Help(argparse.Action):
    """``-h``/``--help`` of ``cirulla bot``: after ``text`` or ``check`` (parsed by then,
    being the first positional), that form's own help; else the whole parser's."""

    def __init__(self, option_strings: list[str], dest: str, **_: object) -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show this help message and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        form = getattr(namespace, "kind", None)
        (form_parser(parser, form) if form in FORM_HELP else parser).print_help()
        parser.exit()


def form_parser(parser: argparse.ArgumentParser, form: str) -> argparse.ArgumentParser:
    """A parser for the help of ``cirulla bot FORM``: the options of ``parser`` it reads."""
    usage, description, wanted = FORM_HELP[form]
    sub = argparse.ArgumentParser(
        prog=f"cirulla bot {form}",
        usage=usage,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    for action in parser._actions:
        if action.dest in wanted or action.dest == argparse.SUPPRESS:
            sub._add_action(copy.copy(action))
            sub._actions[-1].help = FORM_OPTION_HELP.get((form, action.dest), action.help)
    return sub


def _kinds_text() -> str:
    lines = []
    for kind in KINDS.values():
        lines.append(f"  {kind.name:8} {kind.summary}")
        for opt in kind.options:
            lines.append(f"             --{opt.name} ({opt.type.__name__}): {opt.help}")
    return "\n".join(lines) + "\n"


def _run_bot(args: argparse.Namespace) -> int:
    if args.kind != "check":
        for key in text_cli.CHECK_ONLY:
            if getattr(args, key, None) is not None:
                print(
                    f"cirulla bot: --{key} is for `cirulla bot check` (an engine's limits as on "
                    "a ladder); `cirulla bot text` takes --memory-limit, --cpu-limit, --processes",
                    file=sys.stderr,
                )
                return 2
    if args.kind == "text":
        return text_cli.run_text_bot(args, args.command_line or args.engine)
    if args.kind == "check":
        require("server")  # the check plays its games on a local match server
        return text_cli.run_check(args, args.engine)
    if args.engine or args.command_line:
        print(
            f"cirulla bot: unexpected arguments {' '.join(args.engine)!r} "
            f"(only `cirulla bot text -- CMD` takes a command)",
            file=sys.stderr,
        )
        return 2
    try:
        policy = policy_from_args(args)
    except ValueError as exc:
        print(f"cirulla bot: {exc}", file=sys.stderr)
        return 2
    if args.ladder:  # a connect-in bot: a fresh policy for each assigned match
        getattr(policy, "close", lambda: None)()
        return enroll.run_from_args(args, lambda: policy_from_args(args))
    return play_seat(policy, args, "cirulla bot")


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    p = commands.add_parser(
        "bot",
        help="play one seat of a match with a built-in bot (random, greedy, mcts, learned, "
        "policy) or a text engine (bot text); check an engine (bot check)",
        description=BOT_DESCRIPTION.format(kinds=_kinds_text()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    p.add_argument("-h", "--help", action=_Help)
    p.add_argument(
        "kind",
        choices=sorted(KINDS) + list(COMMAND_KINDS),
        metavar="KIND",
        help=f"bot kind: {', '.join(KINDS)}; or text / check (below)",
    )
    p.add_argument(
        "engine",
        nargs="*",
        default=[],  # else argparse names CMD among the required arguments of a bare `bot`
        metavar="CMD",
        help="text: the engine's command line, after --; check: the engine spec",
    )
    add_connection_arguments(p)
    add_kind_arguments(p)
    p.add_argument(
        "--games",
        type=int,
        choices=range(1, 5),
        metavar="N",
        help="check: play only the first N of the 4 check games",
    )
    enroll.add_ladder_arguments(p)
    text_cli.add_bridge_arguments(p)  # `bot text`: the engine's limits and timeouts
    text_cli.add_check_arguments(p)  # `bot check`: the limits of a ladder or a sandbox
    p.set_defaults(func=_run_bot, command_line=None)
    match_cli.register(commands)
    text_cli.register_engine(commands)
    benchmarks.register(bench)
