"""``cirulla ladder logs|record|events`` for bot authors and ``rotate-key`` for the admin
(their parsers, and ``serve --webhook``'s, are in ``cirulla.ladder.cli``).

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
