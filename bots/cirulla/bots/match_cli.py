"""``cirulla match create``: create a match on a running server and print its id and seat
tokens, so a server and a few ``cirulla bot`` commands can be tried without gRPC code.

The rule options are given as the tournament takes them (``--preset``, ``--rule``,
``--players``, ``--target``, ``--move-limit``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import grpc

from cirulla.bots.kit import BotError, open_channel
from cirulla.rules import OptionError, Options
from cirulla.rules.arguments import add_rule_arguments, rule_overrides
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc, match_settings_pb2
from cirulla.wire import rules_to_proto

DEFAULT_SERVER = "127.0.0.1:50051"

DESCRIPTION = """\
Create a match on a running Cirulla server (`cirulla server`) and print its id and one
secret token per seat, then the commands that play each seat with a built-in bot:

  cirulla server &
  cirulla match create --players 2 --target 21
  CIRULLA_SERVER=127.0.0.1:50051 CIRULLA_MATCH=... CIRULLA_TOKEN=... cirulla bot greedy

The match starts when every seat has joined. Tokens are secrets: whoever holds one plays
that seat. --json prints {"match_id", "server", "tokens": [...]} instead.
"""


def _seed(text: str) -> int:
    """``MatchSettings.seed`` is a uint64: one line for what does not fit (protobuf's own
    words were ``Value out of range: -5``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a whole number, not {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must be 0 to 2^64-1, not {value}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:  # argparse's own words name this function: "invalid _positive value"
        raise argparse.ArgumentTypeError(f"takes a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def settings_from_args(args: argparse.Namespace) -> match_settings_pb2.MatchSettings:
    """The match settings the options describe; ``OptionError`` names a bad option."""
    preset = args.preset or "standard"
    rules = rule_overrides(args)
    Options.preset(preset, **rules)  # the preset's own checks (fantacarte: 2 players)
    settings = match_settings_pb2.MatchSettings(
        rules=rules_to_proto(preset, rules),
        best_of=args.games,
        time_control=match_settings_pb2.TimeControl(
            move_limit_ms=args.move_limit or 0, game_bank_ms=args.bank or 0
        ),
        timeout_policy=(
            match_settings_pb2.TIMEOUT_POLICY_FORFEIT_GAME
            if args.forfeit
            else match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION
        ),
    )
    if args.seed is not None:
        settings.seed = args.seed
    return settings


def _create(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except (OptionError, ValueError) as exc:
        print(f"cirulla match create: {exc}", file=sys.stderr)
        return 2
    server = args.server or os.environ.get("CIRULLA_SERVER") or DEFAULT_SERVER
    admin = args.admin_token or os.environ.get("CIRULLA_ADMIN_TOKEN")
    metadata = (("authorization", f"Bearer {admin}"),) if admin else ()
    try:
        with open_channel(server, args.tls_ca or os.environ.get("CIRULLA_TLS_CA")) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            reply = stub.CreateMatch(
                match_service_pb2.CreateMatchRequest(settings=settings),
                metadata=metadata,
                timeout=args.timeout,
            )
    except BotError as exc:
        print(f"cirulla match create: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as exc:
        print(
            f"cirulla match create: {server}: {exc.code().name}: {exc.details()}", file=sys.stderr
        )
        return 1
    match_id = reply.match.match_id
    tokens = [t.token for t in sorted(reply.seat_tokens, key=lambda t: t.seat)]
    if args.json:
        print(json.dumps({"match_id": match_id, "server": server, "tokens": tokens}))
        return 0
    print(f"match {match_id} on {server} ({len(tokens)} seats; starts when all have joined)")
    for seat, token in enumerate(tokens):
        print(f"seat {seat} token {token}")
    print("\nplay a seat with a built-in bot (KIND: random, greedy, mcts):")
    for seat, token in enumerate(tokens):
        env = f"CIRULLA_SERVER={server} CIRULLA_MATCH={match_id} CIRULLA_TOKEN={token}"
        print(f"  {env} cirulla bot KIND --name seat{seat}")
    print(
        "or your own bot with the same variables: python my_bot.py (docs/bots.md), "
        "cirulla bot text -- ./my-engine (docs/text-protocol.md)"
    )
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "match",
        help="create a match on a running server and print its seat tokens",
        description="Matches on a running server. `cirulla match create --help` for details.",
    )
    actions = p.add_subparsers(dest="match_command", metavar="ACTION", required=True)
    c = actions.add_parser(
        "create",
        help="create a match; print its id and seat tokens",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument(
        "--server",
        metavar="HOST:PORT",
        help=f"the server (default: $CIRULLA_SERVER, else {DEFAULT_SERVER})",
    )
    c.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help="the server's admin token, if it has one (default: $CIRULLA_ADMIN_TOKEN)",
    )
    c.add_argument(
        "--tls-ca", metavar="PEM", help="use TLS with this CA certificate ($CIRULLA_TLS_CA)"
    )
    add_rule_arguments(c)
    c.add_argument("--target", type=_positive, metavar="T", help="points that end a game (51)")
    c.add_argument(
        "--games", type=_positive, default=1, metavar="N", help="best of N games (default 1)"
    )
    c.add_argument(
        "--move-limit", type=_positive, metavar="MS", help="per-move clock in ms (default none)"
    )
    c.add_argument("--bank", type=_positive, metavar="MS", help="time bank per game in ms")
    c.add_argument(
        "--forfeit",
        action="store_true",
        help="running out of time loses the game (default: the server plays a default move)",
    )
    c.add_argument(
        "--seed", type=_seed, metavar="S", help="deck seed, 0 to 2^64-1 (default: random)"
    )
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--timeout", type=float, default=10.0, help=argparse.SUPPRESS)
    c.set_defaults(func=_create)
