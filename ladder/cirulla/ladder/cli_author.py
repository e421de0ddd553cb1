"""The ``cirulla ladder`` commands a bot's author reads and asks with: a bot's history,
one match, every match, head to head, and requested matches (``request`` takes the bot's
key instead of the admin token for unrated games of that bot).
"""

from __future__ import annotations

import argparse
import json
import os

from rich.table import Table

from cirulla.console import output_console
from cirulla.ladder.cli_client import (
    CommandError,
    admin_metadata,
    call,
    ladder_address,
    match_line,
    matches_table,
    queue_pb,
    run_command,
    say,
    state_text,
    to_json,
    when,
)
from cirulla.ladder.defaults import MAX_PAGE, MAX_REQUEST_GAMES
from cirulla.ladder.fields import plain
from cirulla.ladder_words import MATCH_STATUSES, QUEUE_NAMES
from cirulla.v1 import ladder_pb2


@run_command
def run_history(args: argparse.Namespace) -> int:
    response = call(
        args,
        "GetBotHistory",
        ladder_pb2.GetBotHistoryRequest(
            bot_name=args.bot, queue=queue_pb(args.queue), page_size=args.limit
        ),
        ladder_pb2.GetBotHistoryResponse,
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    bot = response.bot
    say(console, f"{bot.name} version {bot.version}: {bot.spec} — {state_text(bot)}")
    if bot.last_failure:
        say(console, f"last failure: {bot.last_failure}")
    if bot.last_log and bot.state == ladder_pb2.BOT_STATE_DEACTIVATED:
        say(console, "last log (the bot's own output in that match):")
        say(console, bot.last_log[-1500:])
    for v in response.versions:
        say(console, f"  v{v.version} {when(v.create_time)}  {v.spec}")
    for r in response.ratings:
        queue = QUEUE_NAMES.get(r.queue, str(r.queue))
        say(
            console,
            f"  {queue}: rating {r.score:.1f} (mu {r.mu:.1f}, sigma {r.sigma:.2f}), "
            f"{r.games} games, {r.wins} wins" + (" provisional" if r.provisional else ""),
        )
    say(console, matches_table(response.matches, "matches, newest first"))
    return 0


@run_command
def run_match(args: argparse.Namespace) -> int:
    m = call(
        args,
        "GetLadderMatch",
        ladder_pb2.GetLadderMatchRequest(match_id=args.match_id),
        ladder_pb2.GetLadderMatchResponse,
    ).match
    if args.json:
        print(json.dumps(to_json(m), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    match_id, created, status, _seats, result = match_line(m)
    say(console, f"{match_id} ({QUEUE_NAMES.get(m.queue, str(m.queue))}) {status}")
    say(
        console, f"  scheduled {created}, started {when(m.start_time)}, ended {when(m.finish_time)}"
    )
    if m.server_match_id:
        say(console, f"  match server: {m.server_address} match {m.server_match_id}")
    if m.pair_id:
        say(console, f"  duplicate pair {m.pair_id}")
    if m.request_id:
        say(console, f"  requested: {m.request_id} (cirulla ladder requests)")
    say(console, f"  result: {result or '-'}" + ("" if m.rated else " (unrated)"))
    for s in m.seats:
        points = str(s.points) if s.HasField("points") else "-"
        rating = f" mu {s.mu_after:.1f} sigma {s.sigma_after:.2f}" if s.HasField("mu_after") else ""
        fault = f" — {s.fault}" if s.fault else ""
        say(
            console,
            f"  seat {s.seat} side {s.side}: {s.bot_name} v{s.version} "
            f"{s.outcome or ''} points {points}{rating}{fault}",
        )
    for note in m.notes:
        say(console, f"  note: {note}")
    return 0


@run_command
def run_matches(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise CommandError(f"--limit: must be at least 1, not {args.limit}")
    found: list[ladder_pb2.LadderMatch] = []
    token = ""
    while len(found) < args.limit:  # the rpc's pages are at most MAX_PAGE long
        response = call(
            args,
            "ListLadderMatches",
            ladder_pb2.ListLadderMatchesRequest(
                queue=queue_pb(args.queue),
                status=(
                    MATCH_STATUSES[args.status]
                    if args.status
                    else ladder_pb2.LADDER_MATCH_STATUS_UNSPECIFIED
                ),
                bot_name=args.bot or "",
                page_size=min(args.limit - len(found), MAX_PAGE),
                page_token=token,
            ),
            ladder_pb2.ListLadderMatchesResponse,
        )
        found.extend(response.matches)
        token = response.next_page_token
        if not token:
            break
    if args.json:
        out = {"matches": [to_json(m) for m in found], "more": bool(token)}
        print(json.dumps(out, indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    say(console, matches_table(found, "matches, newest first"))
    if token:
        say(console, f"the newest {len(found)} are listed; older ones: raise --limit")
    return 0


@run_command
def run_h2h(args: argparse.Namespace) -> int:
    h = call(
        args,
        "GetHeadToHead",
        ladder_pb2.GetHeadToHeadRequest(
            bot_a=args.bot_a, bot_b=args.bot_b, queue=queue_pb(args.queue), page_size=args.limit
        ),
        ladder_pb2.GetHeadToHeadResponse,
    )
    if args.json:
        print(json.dumps(to_json(h), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    say(
        console,
        f"{h.bot_a} vs {h.bot_b}: {h.games} games, {h.a_wins}-{h.b_wins}-{h.draws} (W-L-D), "
        f"points {h.a_points}-{h.b_points}",
    )
    say(console, matches_table(h.matches))
    return 0


def request_summary(r: ladder_pb2.MatchRequest) -> str:
    """``grd 3, rnd 1, 0 drawn`` over the request's finished, not withheld games."""
    wins = dict.fromkeys(r.bot_names, 0)
    drawn = 0
    for m in r.matches:
        if m.status != ladder_pb2.LADDER_MATCH_STATUS_FINISHED or m.withheld:
            continue
        if not m.HasField("winner_side"):
            drawn += 1
            continue
        for s in m.seats:
            if s.side == m.winner_side and s.bot_name in wins:
                wins[s.bot_name] += 1
    return ", ".join(f"{name} {n}" for name, n in wins.items()) + f", {drawn} drawn"


def request_line(r: ladder_pb2.MatchRequest) -> list[str]:
    queue = QUEUE_NAMES.get(r.queue, "?")
    kind = "unrated" if r.unrated else "rated"
    left = r.games - r.finished - r.cancelled
    progress = f"{r.finished}/{r.games} played" + (
        f", {r.cancelled} cancelled" if r.cancelled else ""
    )
    progress += f", {left} to play" if left else ""
    return [
        r.request_id,
        when(r.create_time),
        r.requested_by,
        " ".join(r.bot_names) + f" ({queue}, {kind})",
        progress,
        request_summary(r),
    ]


@run_command
def run_request(args: argparse.Namespace) -> int:
    if not 1 <= args.games <= MAX_REQUEST_GAMES:  # 0 on the wire means 1
        raise CommandError(f"--games: 1 to {MAX_REQUEST_GAMES}, not {args.games}")
    key = ""
    if args.bot_key_file is not None:
        try:
            key = args.bot_key_file.read_text().strip()
        except OSError as exc:
            raise CommandError(f"--bot-key-file: {exc.strerror or exc}") from None
        if not key:
            raise CommandError(f"--bot-key-file {args.bot_key_file}: the file is empty")
    request = ladder_pb2.RequestMatchRequest(
        bot_names=args.bots, games=args.games, unrated=args.unrated, bot_key=key
    )
    admin = not key
    if admin:
        _, state = ladder_address(args)
        if not admin_metadata(args, state) and os.environ.get("CIRULLA_BOT_KEY"):
            request.bot_key = os.environ["CIRULLA_BOT_KEY"].strip()  # an owner's request
            admin = False
    r = call(args, "RequestMatch", request, ladder_pb2.RequestMatchResponse, admin=admin).request
    if args.json:
        print(json.dumps(to_json(r), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    ident, _, by, bots, _, _ = request_line(r)
    say(
        console,
        f"request {ident} by {by}: {r.games} games, {bots}; played before scheduled matches",
    )
    for m in r.matches:
        say(console, f"  {m.match_id}  " + " ".join(f"{s.bot_name}(v{s.version})" for s in m.seats))
    say(
        console, f"follow it: cirulla ladder requests; cirulla ladder match {r.matches[0].match_id}"
    )
    return 0


@run_command
def run_requests(args: argparse.Namespace) -> int:
    response = call(
        args,
        "ListMatchRequests",
        ladder_pb2.ListMatchRequestsRequest(bot_name=args.bot or "", page_size=args.limit),
        ladder_pb2.ListMatchRequestsResponse,
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    table = Table(title="Requested matches, newest first")
    for column in ("request", "requested", "by", "bots", "games", "wins"):
        table.add_column(column)
    for r in response.requests:
        table.add_row(*(plain(cell) for cell in request_line(r)))
    console = output_console()
    console.print(table)
    for r in response.requests:
        if r.finished + r.cancelled < r.games:
            waiting = [m.match_id for m in r.matches if m.status in (
                ladder_pb2.LADDER_MATCH_STATUS_SCHEDULED,
                ladder_pb2.LADDER_MATCH_STATUS_CLAIMED,
                ladder_pb2.LADDER_MATCH_STATUS_RUNNING,
            )]  # fmt: skip
            console.print(plain(f"{r.request_id} next: cirulla ladder match {waiting[0]}"))
    return 0
