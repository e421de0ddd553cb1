"""``cirulla ladder serve``: the ladder itself (match server, scheduler and workers). Its
options, and the safety options (sandbox, TLS, web view, metrics) it shares with
``cirulla ladder worker``, are in ``cirulla.ladder.cli``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from cirulla.clients.matches.log_budget import bot_logs_option
from cirulla.ladder.idle import check_idle_poll
from cirulla.ladder.retention import parse_keep
from cirulla.rules import OptionError, Options, parse_overrides
from cirulla.server.logs import log_to_file, setup_logging


def run_serve(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import DatabaseError

    from cirulla.ladder.database import first_line
    from cirulla.ladder.serve import ServeOptions, serve
    from cirulla.ladder.store import QUEUE_PLAYERS, MatchConfig

    setup_logging(args.log_level, "ladder")
    try:
        if args.log_file is not None:
            log_to_file(args.log_file, "ladder")
        keep = parse_keep(args.keep_records) if args.keep_records is not None else None
        bot_logs = bot_logs_option(args.bot_logs)
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
            bot_logs=bot_logs,
            pace=args.pace,
            idle_pace=args.idle_pace,
            idle_poll=check_idle_poll(args.idle_poll),
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
    except DatabaseError as exc:  # not reachable, refused, not a database: one line
        print(f"cirulla ladder serve: cannot use the database: {first_line(exc)}", file=sys.stderr)
        return 2
    return 0
