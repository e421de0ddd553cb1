"""``cirulla ladder worker``: plays scheduled ladder matches on this machine (fishtest-style).

A worker is ``cirulla ladder serve`` without the scheduler: its own match server (with the
LadderService, so connect-in bots may enroll here too), worker threads that claim
scheduled matches from the shared database (PostgreSQL: ``SELECT ... FOR UPDATE SKIP
LOCKED``), start the managed bots, report results, and a heartbeat that renews the
leases of what it plays. Any number of workers on any machines share one PostgreSQL
ladder; a worker that dies loses its leases and its matches are re-queued (not started)
or cancelled with the reason (running) by the reaper of any other ladder process
(``cirulla.ladder.leases``). Restarted on the same ``--data`` folder it settles what
its previous incarnation left, like ``serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from cirulla.clients.matches.log_budget import bot_logs_option
from cirulla.ladder.idle import check_idle_poll
from cirulla.ladder.retention import parse_keep
from cirulla.server.logs import log_to_file, setup_logging


def run_worker(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import DatabaseError

    from cirulla.ladder.database import first_line
    from cirulla.ladder.serve import ServeOptions, serve

    setup_logging(args.log_level, "ladder-worker")
    try:
        if args.concurrency < 1:
            raise ValueError(f"--concurrency must be at least 1, not {args.concurrency}")
        if args.lease < 2:
            raise ValueError(f"--lease must be at least 2 seconds, not {args.lease}")
        if args.log_file is not None:
            log_to_file(args.log_file, "ladder-worker")
        keep = parse_keep(args.keep_records) if args.keep_records is not None else None
        bot_logs = bot_logs_option(args.bot_logs)
        options = ServeOptions(
            db=args.db,
            listen=args.listen,
            data=args.data,
            concurrency=args.concurrency,
            role="worker",
            lease_seconds=args.lease,
            advertise=args.advertise,
            sandbox=not args.no_sandbox,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
            tls_ca=args.tls_ca,
            http=args.http,
            metrics=args.metrics,
            keep_records=keep,
            bot_logs=bot_logs,
            idle_poll=check_idle_poll(args.idle_poll),
        )
        asyncio.run(serve(options))
    except (OSError, ValueError) as exc:
        print(f"cirulla ladder worker: {exc}", file=sys.stderr)
        return 2
    except DatabaseError as exc:  # not reachable, refused, not a database: one line
        print(f"cirulla ladder worker: cannot use the database: {first_line(exc)}", file=sys.stderr)
        return 2
    return 0
