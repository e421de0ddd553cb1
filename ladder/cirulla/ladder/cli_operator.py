"""The operator's ``cirulla ladder`` commands: register bots (``add``), pause, resume and
remove them, give the ladder's user a control group (``cgroup-setup``), read the standings.
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.table import Table
from rich.text import Text

from cirulla.bots.cgroups import BotLimits, delegate, parse_limits
from cirulla.console import output_console
from cirulla.ladder.cli_client import (
    CommandError,
    call,
    queue_pb,
    run_command,
    state_text,
    to_json,
)
from cirulla.ladder.fields import plain
from cirulla.ladder.limits import compact, text_from_pb
from cirulla.ladder.spec_paths import SpecPathError, resolve_spec_paths
from cirulla.ladder.store_rows import LadderError
from cirulla.v1 import ladder_pb2


@run_command
def run_add(args: argparse.Namespace) -> int:
    try:
        # resolved here, where the operator typed it: the bot runs in a worker's folder
        spec = resolve_spec_paths(args.spec)
    except SpecPathError as exc:
        raise CommandError(str(exc)) from None
    request = ladder_pb2.AddBotRequest(
        bot_name=args.name,
        spec=spec,
        queues=[queue_pb(q) for q in (args.queue or ["2p"])],
        max_concurrency=args.max_concurrency,
    )

    limits, limits_pb = add_limits(args)
    if limits_pb is not None:
        request.limits.CopyFrom(limits_pb)
    response = call(args, "AddBot", request, ladder_pb2.AddBotResponse, admin=True)
    bot = response.bot
    if response.new_version:
        print(f"{bot.name} version {bot.version}: {bot.spec} ({state_text(bot)})")
        if limits:
            print(f"limits in the sandbox: {limits} ({compact(bot.limits)})")
    else:
        print(f"{bot.name} version {bot.version} is already registered with this spec")
    if response.bot_key and bot.connect_in:
        print(
            "bot key (shown once; keep it secret, give it to the bot as CIRULLA_BOT_KEY):\n"
            + response.bot_key
        )
    elif response.bot_key:  # its author reads its logs, records and state changes with it
        print(
            "bot key (shown once; keep it secret, give it to the bot's author: `cirulla "
            "ladder logs|record|events` read with it as CIRULLA_BOT_KEY):\n" + response.bot_key
        )
    return 0


def run_cgroup_setup(args: argparse.Namespace) -> int:
    try:
        folders = delegate(args.user, args.base)
    except (OSError, ValueError) as exc:
        print(f"cirulla ladder cgroup-setup: {exc}", file=sys.stderr)
        return 2
    for folder in folders:
        print(f"{folder}: {args.user}'s bots get their limits here")
    return 0


def add_limits(args: argparse.Namespace) -> tuple[str, ladder_pb2.BotLimits | None]:
    """``--memory``, ``--processes``, ``--cpu`` and ``--limits`` as one checked list and
    as the request's ``BotLimits`` (the fields given; None when none is): ("", None)
    without any. A bad value is one line naming the option."""
    parts = [p for p in args.limits.split(",") if p.strip()]
    for key in ("memory", "processes", "cpu"):
        value = getattr(args, key)
        if value is not None:
            parts.append(f"{key}={value}")
    if not parts:
        return "", None
    # over a base of zeros: a field still 0 afterwards was not given (the ladder's default)
    unset = BotLimits(memory_bytes=0, processes=0, cpu=0, output_bytes=0, tmp_bytes=0)
    try:
        given = parse_limits(",".join(parts), unset)
    except ValueError as exc:
        raise CommandError(f"--{str(exc).split(':')[0]}: {str(exc).split(': ', 1)[-1]}") from None
    cpu_given = any(p.split("=", 1)[0].strip().lower() == "cpu" for p in parts)
    if cpu_given and given.cpu == 0:
        raise CommandError("--cpu: a ladder bot always has a CPU quota: more than 0 cores")
    pb = ladder_pb2.BotLimits(
        memory_bytes=given.memory_bytes,
        processes=given.processes,
        cpu_millicores=max(1, round(given.cpu * 1000)) if given.cpu else 0,
        output_bytes=given.output_bytes,
        tmp_bytes=given.tmp_bytes,
    )
    try:
        text_from_pb(pb)
    except LadderError as exc:
        field, _, why = str(exc).partition(": ")
        option = {
            "limits.memory_bytes": "--memory",
            "limits.processes": "--processes",
            "limits.cpu_millicores": "--cpu",
            "limits.output_bytes": "--limits output",
            "limits.tmp_bytes": "--limits tmp",
        }.get(field, "--limits")
        raise CommandError(f"{option}: {why}") from None
    return ",".join(parts), pb


@run_command
def run_standings(args: argparse.Namespace) -> int:
    response = call(
        args,
        "GetStandings",
        ladder_pb2.GetStandingsRequest(queue=queue_pb(args.queue), include_inactive=args.all),
        ladder_pb2.GetStandingsResponse,
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    title = f"Ladder standings, queue {args.queue} ({response.rated_games} rated games)"
    table = Table(title=title)
    columns = ["#", "bot", "v", "rating", "mu", "sigma", "games", "win%", "state"]
    if args.all:  # the operator's view: what each version runs under
        columns.append("limits")
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("bot", "state", "limits") else "right"
        )
    for e in response.entries:
        r = e.rating
        rate = f"{100 * (r.wins + r.draws / 2) / r.games:.0f}%" if r.games else "-"
        row: list[str | Text] = [
            str(e.rank),
            plain(e.bot.name),
            str(e.bot.version),
            f"{r.score:.1f}" + ("?" if r.provisional else ""),
            f"{r.mu:.1f}",
            f"{r.sigma:.2f}",
            str(r.games),
            rate,
            plain(state_text(e.bot)),
        ]
        if args.all:
            row.append(compact(e.bot.limits))
        table.add_row(*row)
    console = output_console()
    console.print(table)
    console.print("rating = mu - 3 sigma; ? = provisional (fewer than 10 rated games)")
    if args.all:
        console.print(
            "limits = memory/processes/CPU cores of each version in the sandbox; "
            "- = connect-in (runs elsewhere)"
        )
    for e in response.entries:
        if e.bot.last_log and e.bot.state == ladder_pb2.BOT_STATE_DEACTIVATED:
            console.print(Text(e.bot.name, style="bold"), "last log:")
            console.print(plain(e.bot.last_log[-1500:]))
    return 0


@run_command
def run_state(args: argparse.Namespace) -> int:
    answer: (
        ladder_pb2.PauseBotResponse | ladder_pb2.ResumeBotResponse | ladder_pb2.RemoveBotResponse
    )
    if args.action == "pause":
        answer = call(
            args,
            "PauseBot",
            ladder_pb2.PauseBotRequest(bot_name=args.bot, reason=args.reason),
            ladder_pb2.PauseBotResponse,
            admin=True,
        )
    elif args.action == "resume":
        answer = call(
            args,
            "ResumeBot",
            ladder_pb2.ResumeBotRequest(bot_name=args.bot),
            ladder_pb2.ResumeBotResponse,
            admin=True,
        )
    else:
        answer = call(
            args,
            "RemoveBot",
            ladder_pb2.RemoveBotRequest(bot_name=args.bot, reason=args.reason),
            ladder_pb2.RemoveBotResponse,
            admin=True,
        )
    bot = answer.bot
    print(f"{bot.name}: {state_text(bot)}")
    return 0
