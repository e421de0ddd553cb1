"""``cirulla server``, ``cirulla replay`` and ``cirulla bench server``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

SERVER_HELP = """\
Run the Cirulla match server (gRPC, asyncio).

Clients create matches with CreateMatch (one secret token per seat), then each player
opens a Play stream with its token; the match starts when every seat has joined. Every
finished game is stored in the SQLite database (--db) and can be checked with
`cirulla replay`. The standard gRPC health service and server reflection are enabled,
so `grpcurl -plaintext 127.0.0.1:50051 list` works.

Examples:
  cirulla server                                   # 127.0.0.1:50051, ./cirulla.sqlite3
  cirulla server --listen 0.0.0.0:50051 --admin-token s3cret
  cirulla server --listen 127.0.0.1:0 --port-file port.txt --db /tmp/t.sqlite3
  cirulla server --http 127.0.0.1:8080             # and the web view on port 8080

With --admin-token, CreateMatch, CreateRoom and AbortMatch need the call metadata
`authorization: Bearer <token>`. Stop with Ctrl-C or SIGTERM: connected players get a
Goodbye (reason SERVER_SHUTDOWN) first. See docs/server.md.
"""

REPLAY_HELP = """\
Re-run a recorded game through the rules core and check every deal score and the result.

RECORD is a record id stored in --db (see ListRecords, or `cirulla replay --list`), or a
record file: the protocol's Record message as JSON, as `cirulla tournament` writes it
(records/*.json, every game of a match) and `cirulla replay --export ID --out FILE`
writes it. Exits 0 when the replay matches the record, 1 on any mismatch.
--show prints the game as text instead: one line per action, each deal's score lines,
the result (the tournament writes the same text next to each record, records/*.txt).

Examples:
  cirulla replay m-1-3fa2b1-g1 --db cirulla.sqlite3
  cirulla replay --export m-1-3fa2b1-g1 --out game.json
  cirulla replay game.json
  cirulla replay --show tournament/records/m-1-3fa2b1.json
"""


def register(commands: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "server",
        help="run the gRPC match server",
        description=SERVER_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--listen",
        default="127.0.0.1:50051",
        metavar="HOST:PORT",
        help="address to listen on; port 0 picks a free port (default %(default)s)",
    )
    p.add_argument(
        "--db",
        default="cirulla.sqlite3",
        metavar="PATH",
        help="SQLite file for match summaries and game records (default %(default)s)",
    )
    p.add_argument(
        "--port-file", metavar="FILE", help="after binding, write the bound port number to FILE"
    )
    p.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help="require 'authorization: Bearer TOKEN' metadata on CreateMatch, "
        "CreateRoom and AbortMatch (default: anyone may create and abort)",
    )
    p.add_argument("--tls-cert", metavar="PEM", help="serve TLS with this certificate chain")
    p.add_argument("--tls-key", metavar="PEM", help="private key for --tls-cert")
    p.add_argument(
        "--disconnect-grace-ms",
        type=int,
        default=30_000,
        metavar="MS",
        help="default time a dropped seat has to reconnect (default %(default)s)",
    )
    p.add_argument(
        "--keep-finished",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long a finished or aborted match stays in memory (late spectators get its "
        "events) before only the database serves it; GetMatch, ListMatches and GetRecord "
        "answer either way (default %(default)s)",
    )
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="also serve the web view here (match list, live view, replays; public "
        "information only), e.g. 127.0.0.1:8080",
    )
    p.add_argument(
        "--ladder-db",
        metavar="URL",
        help="with --http: also show the standings of the ladder in this database "
        "(a SQLite file or postgresql:// URL) with each bot's rating over time, at /ladder",
    )
    p.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING"),
        help="log level; logs are key=value lines on stderr (default %(default)s)",
    )
    p.set_defaults(func=run_server_command)

    r = commands.add_parser(
        "replay",
        help="check a recorded game against the rules core",
        description=REPLAY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("record", nargs="?", help="record id (in --db) or a record JSON file")
    r.add_argument("--db", default="cirulla.sqlite3", help="database (default %(default)s)")
    r.add_argument("--export", metavar="ID", help="write record ID from --db as JSON (--out)")
    r.add_argument("--out", metavar="FILE", help="output file for --export (default stdout)")
    r.add_argument("--list", action="store_true", help="list record ids in --db, newest first")
    r.add_argument(
        "--show",
        action="store_true",
        help="print RECORD as text (one line per action, score lines) instead of checking it",
    )
    r.set_defaults(func=run_replay_command)

    b = bench.add_parser(
        "server",
        help="gRPC round trips, gRPC vs in-process game, 50 concurrent matches",
        description="Measure the match server on loopback; prints one JSON object.",
    )
    b.add_argument("--json", action="store_true", help="print JSON (always on; for symmetry)")
    b.add_argument(
        "--decisions",
        type=int,
        default=2000,
        help="decisions timed on one stream (default %(default)s)",
    )
    b.add_argument(
        "--matches",
        type=int,
        default=50,
        help="concurrent matches in the load test (default %(default)s)",
    )
    b.add_argument(
        "--target", type=int, default=11, help="game target for the load test (default %(default)s)"
    )
    b.set_defaults(func=run_bench_command)


def run_server_command(args: argparse.Namespace) -> int:
    from cirulla.server.app import serve
    from cirulla.server.logs import setup_logging

    setup_logging(args.log_level)
    try:
        asyncio.run(
            serve(
                args.listen,
                args.db,
                port_file=args.port_file,
                admin_token=args.admin_token,
                tls_cert=args.tls_cert,
                tls_key=args.tls_key,
                disconnect_grace_ms=args.disconnect_grace_ms,
                keep_finished_s=args.keep_finished,
                http=args.http,
                ladder_db=args.ladder_db,
            )
        )
    except (OSError, ValueError) as exc:
        print(f"cirulla server: {exc}", file=sys.stderr)
        return 2
    return 0


def run_replay_command(args: argparse.Namespace) -> int:
    from cirulla.server import records
    from cirulla.server.convert import record_pb
    from cirulla.server.replay import load_record, public_records, replay_document
    from cirulla.server.store import Store

    if args.list or args.export:
        if not Path(args.db).exists():
            print(f"cirulla replay: no database {args.db}", file=sys.stderr)
            return 2
        store = Store(args.db)
        if args.list:
            for rec in store.list_records(limit=1000):
                res = rec["result"]
                print(
                    f"{rec['record_id']}\t{rec['finish_time']}\twinner side {res['winner']}"
                    f"\t{res['reason']}\t{res['totals']}"
                )
            return 0
        rec = store.get_record(args.export)
        if rec is None:
            print(f"cirulla replay: no record {args.export!r} in {args.db}", file=sys.stderr)
            return 2
        text = records.dumps(records.record_dict(record_pb(rec)))
        if args.out:
            Path(args.out).write_text(text)
        else:
            print(text, end="")
        return 0
    if not args.record:
        print(
            "cirulla replay: give a RECORD (id or JSON file), --export ID or --list",
            file=sys.stderr,
        )
        return 2
    try:
        record = load_record(args.record, args.db)
    except (OSError, LookupError, ValueError) as exc:
        print(f"cirulla replay: {exc}", file=sys.stderr)
        return 2
    if args.show:
        try:
            games = public_records(record)
        except ValueError as exc:
            print(f"cirulla replay: {exc}", file=sys.stderr)
            return 2
        print("\n".join(records.record_text(game) for game in games), end="")
        return 0
    try:
        reports = replay_document(record)
    except ValueError as exc:
        print(f"cirulla replay: {exc}", file=sys.stderr)
        return 2
    for report in reports:
        print(report.summary())
        for problem in report.mismatches:
            print(f"  mismatch: {problem}")
    return 0 if all(report.ok for report in reports) else 1


def run_bench_command(args: argparse.Namespace) -> int:
    from cirulla.server.bench import run_bench

    result = run_bench(args.decisions, args.matches, args.target)
    print(json.dumps(result, indent=1))
    return 0
