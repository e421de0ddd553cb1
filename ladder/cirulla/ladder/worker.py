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
from pathlib import Path

from cirulla.ladder.cli_serve import add_keeping_arguments, add_safety_arguments
from cirulla.ladder.defaults import DEFAULT_DB, LEASE_SECONDS
from cirulla.ladder.retention import parse_keep
from cirulla.logs import add_log_level_argument
from cirulla.server.logs import log_to_file, setup_logging

DEFAULT_DATA = "cirulla-worker-data"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    w = sub.add_parser(
        "worker",
        help="play scheduled matches of a (PostgreSQL) ladder on this machine",
        description="Claim and play the matches a ladder schedules, on this machine's own "
        "match server, until Ctrl-C or SIGTERM. Start any number on any machines with the "
        "ladder's database (docs/ladder.md, 'Workers').",
    )
    w.add_argument(
        "--db",
        default=DEFAULT_DB,
        help="the ladder's database, e.g. postgresql://USER@HOST:PORT/NAME (default "
        "%(default)s, which only a worker on the ladder's own machine can share)",
    )
    w.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="address of this worker's match server; port 0 picks one (default %(default)s)",
    )
    w.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="address bots on other machines reach this match server at (default: from "
        "--listen; give it when listening on 0.0.0.0 for connect-in bots elsewhere)",
    )
    w.add_argument(
        "--data",
        default=DEFAULT_DATA,
        type=Path,
        metavar="DIR",
        help="bot logs, game records and the match server's database (default %(default)s)",
    )
    w.add_argument(
        "--concurrency",
        type=int,
        default=2,
        metavar="N",
        help="matches played at once (default %(default)s)",
    )
    w.add_argument(
        "--lease",
        type=float,
        default=LEASE_SECONDS,
        metavar="SECONDS",
        help="how long a match stays this worker's without a heartbeat; after that any "
        "ladder process re-queues or cancels it (default %(default)s)",
    )
    add_safety_arguments(w)
    add_keeping_arguments(w)

    add_log_level_argument(w)
    w.set_defaults(func=run_worker)


def run_worker(args: argparse.Namespace) -> int:
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
        )
        asyncio.run(serve(options))
    except (OSError, ValueError) as exc:
        print(f"cirulla ladder worker: {exc}", file=sys.stderr)
        return 2
    return 0
