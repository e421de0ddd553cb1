"""``cirulla ladder serve``: the ladder itself (match server, scheduler and workers), and
the safety options (sandbox, TLS, web view, metrics) it shares with ``cirulla ladder worker``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from cirulla.ladder import cli_own_bot
from cirulla.ladder.defaults import DEFAULT_DATA, DEFAULT_DB, DEFAULT_LISTEN, STATE_FILE
from cirulla.ladder.retention import parse_keep
from cirulla.logs import add_log_level_argument
from cirulla.rules import OptionError, Options, parse_overrides
from cirulla.rules.cli import add_rule_arguments
from cirulla.server.logs import log_to_file, setup_logging


def add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    s = sub.add_parser(
        "serve",
        help="run the ladder: match server, scheduler and workers",
        description="Run the ladder until Ctrl-C or SIGTERM. Writes cirulla-ladder.json in "
        "the current folder so the other ladder commands find it. Safe to kill at any "
        "moment: a restart recovers (docs/ladder.md, 'Durability').",
    )
    s.add_argument(
        "--db",
        default=DEFAULT_DB,
        help="ladder database: a SQLite file or postgresql://USER@HOST:PORT/NAME "
        "(default %(default)s)",
    )
    s.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help="address of the match server and LadderService; port 0 picks one "
        "(default %(default)s)",
    )
    s.add_argument(
        "--data",
        default=DEFAULT_DATA,
        type=Path,
        metavar="DIR",
        help="bot logs, game records and the match server's database (default %(default)s)",
    )
    s.add_argument(
        "--admin-token-file",
        type=Path,
        metavar="FILE",
        help="the admin token (Bearer metadata) add, pause, resume and remove need "
        "(default: DIR/admin-token in --data, created 0600 on first start)",
    )
    s.add_argument(
        "--insecure-open",
        action="store_true",
        help="let anyone who reaches --listen register NEW connect-in bots without the "
        "token (never a command, never an existing name); everything else still needs it",
    )
    add_safety_arguments(s)
    cli_own_bot.add_serve_arguments(s)  # serve --webhook, beside the authors' commands
    s.add_argument(
        "--concurrency",
        type=int,
        default=4,
        metavar="N",
        help="matches played at once by this process; 0: only schedule, for "
        "`cirulla ladder worker`s to play (default %(default)s)",
    )
    add_rule_arguments(s, players=False)  # the queue sets the seats
    s.add_argument(
        "--move-limit",
        dest="move_limit_ms",
        type=int,
        default=10_000,
        metavar="MS",
        help="per-move clock in milliseconds, as cirulla tournament's; a bot out of time "
        "forfeits the game (default %(default)s)",
    )
    s.add_argument(  # its former name, still accepted
        "--move-limit-ms",
        dest="move_limit_ms",
        type=int,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )
    s.add_argument(
        "--game-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="wall-clock limit per game (default %(default)s)",
    )
    s.add_argument(
        "--state-file",
        type=Path,
        default=Path(STATE_FILE),
        metavar="FILE",
        help="where the address is written for the other commands (default %(default)s)",
    )

    add_keeping_arguments(s)
    s.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="GAMES_PER_MINUTE",
        help="schedule at most this many games a minute (default: as fast as it plays)",
    )
    s.add_argument(
        "--idle-pace",
        type=float,
        default=0.0,
        metavar="GAMES_PER_MINUTE",
        help="the pace once a queue is settled: no validation games left, every sigma "
        "under 2 (default: --pace)",
    )
    add_log_level_argument(s)
    s.set_defaults(func=run_serve)


def add_keeping_arguments(p: argparse.ArgumentParser) -> None:
    """--keep-records and --log-file, which a worker's own data folder needs as well."""
    p.add_argument(
        "--keep-records",
        metavar="N|Nd",
        help="keep the records of the newest N games, or of the last N days (30d); older "
        "records and bot logs are pruned, results and ratings stay (default: keep all)",
    )
    p.add_argument(
        "--log-file",
        type=Path,
        metavar="FILE",
        help="log to FILE, rotated at 10 MiB, 5 old files kept (default: stderr)",
    )


def add_safety_arguments(p: argparse.ArgumentParser) -> None:
    """``--no-sandbox``, the TLS options, ``--http`` and ``--metrics`` of ``serve`` and
    ``worker``."""
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve the web view here: standings, bots, matches, replays and live games "
        "(public information only; docs/ladder.md, 'The web view')",
    )
    p.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve Prometheus metrics (cirulla_*, the match server's and the ladder's) at "
        "http://HOST:PORT/metrics",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run managed bots WITHOUT the bubblewrap sandbox, able to read everything "
        "this user can (the ladder's database, records, admin token): only for bots you "
        "wrote yourself (default: every bot process is sandboxed, and the ladder refuses to "
        "start where bubblewrap cannot run)",
    )
    p.add_argument(
        "--tls-cert",
        type=Path,
        metavar="PEM",
        help="serve TLS on --listen with this certificate chain (as `cirulla server`)",
    )
    p.add_argument("--tls-key", type=Path, metavar="PEM", help="private key for --tls-cert")
    p.add_argument(
        "--tls-ca",
        type=Path,
        metavar="PEM",
        help="CA of the other ladder processes' TLS match servers (default: "
        "$CIRULLA_TLS_CA, else --tls-cert itself)",
    )


def run_serve(args: argparse.Namespace) -> int:
    from cirulla.ladder.serve import ServeOptions, serve
    from cirulla.ladder.store import QUEUE_PLAYERS, MatchConfig

    setup_logging(args.log_level, "ladder")
    try:
        if args.log_file is not None:
            log_to_file(args.log_file, "ladder")
        keep = parse_keep(args.keep_records) if args.keep_records is not None else None
        for option, value in (("--pace", args.pace), ("--idle-pace", args.idle_pace)):
            if not value >= 0:
                raise ValueError(f"{option} must be 0 (no limit) or more games a minute")
        overrides = parse_overrides(args.rule)
        if "players" in overrides:
            raise ValueError("--rule players=...: the players of a match come from its queue")
        queues = []
        for queue, players in QUEUE_PLAYERS.items():
            try:
                Options.preset(args.preset, players=players, **overrides)
                queues.append(queue)
            except OptionError as exc:
                if players == 2:
                    raise
                print(f"cirulla ladder serve: queue {queue} not played: {exc}", file=sys.stderr)
        if args.concurrency < 0:
            raise ValueError(f"--concurrency must be 0 or more, not {args.concurrency}")
        options = ServeOptions(
            db=args.db,
            listen=args.listen,
            data=args.data,
            state_file=args.state_file,
            admin_token_file=args.admin_token_file,
            insecure_open=args.insecure_open,
            concurrency=args.concurrency,
            queues=tuple(queues),
            sandbox=not args.no_sandbox,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
            tls_ca=args.tls_ca,
            http=args.http,
            metrics=args.metrics,
            webhook=args.webhook,
            keep_records=keep,
            pace=args.pace,
            idle_pace=args.idle_pace,
            config=MatchConfig(
                preset=args.preset,
                rules=overrides,
                move_limit_ms=args.move_limit_ms,
                game_timeout=args.game_timeout,
            ),
        )
        asyncio.run(serve(options))
    except (OSError, ValueError, OptionError) as exc:
        print(f"cirulla ladder serve: {exc}", file=sys.stderr)
        return 2
    return 0
