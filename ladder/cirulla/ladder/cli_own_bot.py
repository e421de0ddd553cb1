"""``cirulla ladder logs|record|events`` for bot authors, ``rotate-key`` for the admin,
and ``serve --webhook``.

An author holds their bot's key, not the admin token: these commands send it as
``authorization: Bearer`` metadata to the author rpcs (``cirulla.ladder.authors``). The
key is read from ``--bot-key-file FILE`` or ``$CIRULLA_BOT_KEY``, never from the command
line (where ``ps`` and shell histories show it), as ``cirulla bot --ladder`` reads it.
Without a key the admin token is sent, if one is at hand: the operator reads any bot's.
Beside ``cli_author`` (what anyone reads: histories, matches, requests), these are what
only the bot's key opens.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from cirulla.bots.enroll import KEY_ENV, read_bot_key
from cirulla.bots.kit import BotError
from cirulla.console import output_console
from cirulla.ladder.cli_client import (
    CommandError,
    admin_metadata,
    call,
    ladder_address,
    run_command,
    say,
    to_json,
    when,
)
from cirulla.server import records as record_files
from cirulla.v1 import ladder_pb2


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    """``serve --webhook URL``."""
    p.add_argument(
        "--webhook",
        metavar="URL",
        help="POST JSON to this http(s) URL when a bot is deactivated (bot, version, "
        "reason, time); a failing endpoint is logged and never stalls the ladder",
    )


def add_own_bot_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The author commands and ``rotate-key``, on ``cirulla ladder``'s sub-commands."""
    key_help = (
        "a file holding the bot's key (default: $CIRULLA_BOT_KEY; without either, the admin token)"
    )
    lg = sub.add_parser(
        "logs",
        help="a bot's own output in its finished games, with the bot's key",
        description="What the bot wrote (stdout and stderr) in its finished games, newest "
        "first, read with its key ($CIRULLA_BOT_KEY or --bot-key-file, never on the command "
        "line). Games still in play, and the first game of a duplicate pair until its twin "
        "is over, are left out.",
    )
    lg.add_argument("bot")
    lg.add_argument("--match", default="", metavar="ID", help="only this game")
    lg.add_argument("--limit", type=int, default=5, metavar="N", help="games (default 5)")
    lg.add_argument("--bot-key-file", type=Path, metavar="FILE", help=key_help)
    lg.add_argument("--json", action="store_true")
    lg.set_defaults(func=run_logs)

    rc = sub.add_parser(
        "record",
        help="the full record of one finished game of a bot, with the bot's key",
        description="The record (every hand and deck) of one finished game of the bot, "
        "read with its key; printed as text, or written with --out as a record file that "
        "`cirulla replay` reads.",
    )
    rc.add_argument("bot")
    rc.add_argument("match_id")
    rc.add_argument("--out", type=Path, metavar="FILE", help="write the record file here")
    rc.add_argument("--bot-key-file", type=Path, metavar="FILE", help=key_help)
    rc.add_argument("--json", action="store_true")
    rc.set_defaults(func=run_record)

    ev = sub.add_parser(
        "events",
        help="a bot's state changes (registered, paused, deactivated...), with its key",
    )
    ev.add_argument("bot")
    ev.add_argument("--limit", type=int, default=50, metavar="N")
    ev.add_argument("--bot-key-file", type=Path, metavar="FILE", help=key_help)
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=run_events)

    rk = sub.add_parser(
        "rotate-key",
        help="give a bot a new key (admin): the old one stops working at once",
        description="A new key for the bot, printed once: its author's key for logs, "
        "record and events, and a connect-in bot's Enroll key. Needs the admin token.",
    )
    rk.add_argument("bot")
    rk.set_defaults(func=run_rotate_key)


def author_metadata(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """``authorization: Bearer <bot key>`` from --bot-key-file or $CIRULLA_BOT_KEY (read as
    the kit reads it, ``read_bot_key``), else the admin token; one line when there is
    neither."""
    if args.bot_key_file is not None or os.environ.get(KEY_ENV, "").strip():
        try:
            key = read_bot_key(str(args.bot_key_file) if args.bot_key_file else None)
        except BotError as exc:
            raise CommandError(str(exc)) from None
        return (("authorization", f"Bearer {key}"),)
    try:
        _, state = ladder_address(args)
    except CommandError:
        state = {}
    admin = admin_metadata(args, state)
    if not admin:
        raise CommandError(f"give the bot's key: ${KEY_ENV} or --bot-key-file FILE")
    return admin


@run_command
def run_logs(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise CommandError(f"--limit: must be at least 1, not {args.limit}")
    request = ladder_pb2.GetBotLogsRequest(
        bot_name=args.bot, match_id=args.match, page_size=args.limit
    )
    response = call(
        args, "GetBotLogs", request, ladder_pb2.GetBotLogsResponse, extra=author_metadata(args)
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    if not response.logs:
        say(console, f"no finished game of {args.bot} to show yet")
    for entry in response.logs:
        say(console, f"== {entry.match_id} seat {entry.seat}, ended {when(entry.finish_time)}")
        say(console, entry.text.rstrip("\n") if entry.text else f"({entry.note or 'empty'})")
    return 0


@run_command
def run_record(args: argparse.Namespace) -> int:
    request = ladder_pb2.GetBotRecordRequest(bot_name=args.bot, match_id=args.match_id)
    response = call(
        args, "GetBotRecord", request, ladder_pb2.GetBotRecordResponse, extra=author_metadata(args)
    )
    records = list(response.records)
    if args.out is not None:
        doc = record_files.record_document(records, response.match.server_match_id)
        try:
            args.out.write_text(record_files.dumps(doc), encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"--out: {exc.strerror or exc}") from None
        print(f"record of {response.match.match_id} written to {args.out}")
        return 0
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0

    console = output_console(markup=False, highlight=False, emoji=False)
    for record in records:
        say(console, record_files.record_text(record))
    return 0


@run_command
def run_events(args: argparse.Namespace) -> int:
    request = ladder_pb2.ListBotEventsRequest(bot_name=args.bot, page_size=args.limit)
    response = call(
        args,
        "ListBotEvents",
        request,
        ladder_pb2.ListBotEventsResponse,
        extra=author_metadata(args),
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    for e in response.events:
        kind = ladder_pb2.BotEventKind.Name(e.kind).removeprefix("BOT_EVENT_KIND_").lower()
        reason = f": {e.reason}" if e.reason else ""
        say(console, f"{when(e.time)}  v{e.version} {kind.replace('_', ' ')}{reason}")
    return 0


@run_command
def run_rotate_key(args: argparse.Namespace) -> int:
    response = call(
        args,
        "RotateBotKey",
        ladder_pb2.RotateBotKeyRequest(bot_name=args.bot),
        ladder_pb2.RotateBotKeyResponse,
        admin=True,
    )
    print(
        f"new key of {args.bot} (shown once; the old one no longer works; give it to the "
        "bot's author, who reads with it as CIRULLA_BOT_KEY):\n" + response.bot_key
    )
    return 0
