"""``cirulla tournament``: bots against each other on duplicate deals, with a results table."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import grpc
from rich.console import Console
from rich.markup import escape

from cirulla.bots.botspec import BotSpec
from cirulla.bots.cgroups import parse_limits
from cirulla.clients.matches import sandbox
from cirulla.clients.matches.journal import OutputLock, Settings, load_settings, save_settings
from cirulla.clients.matches.log_budget import DEFAULT_BOT_LOGS, parse_bot_logs
from cirulla.clients.matches.schedule import (
    FORMATS,
    games_per_set,
    new_bot_seed_base,
    new_tournament_seed,
)
from cirulla.clients.matches.seat_argv import PLACEHOLDERS
from cirulla.clients.tournament.bench import register_bench
from cirulla.clients.tournament.botsfile import load_bots_file
from cirulla.clients.tournament.deals import load_deals
from cirulla.clients.tournament.runner import (
    INTERRUPTED,
    START_FAILURES,
    RunOptions,
    Tournament,
    schedule_of,
)
from cirulla.clients.tournament.stats import Sprt
from cirulla.console import output_console
from cirulla.logs import setup_logging
from cirulla.rules import OptionError, Options
from cirulla.rules.arguments import add_rule_arguments, rule_overrides
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc

DEFAULT_BOTS = ("random=random", "greedy=greedy", "mcts=mcts:iterations=200")
DEFAULT_GAMES = 10
DEFAULT_OUT_ROOT = Path("tournament-out")

DESCRIPTION = f"""\
Play bots against each other on a match server and print a results table.

With no arguments, runs the demo tournament: random, greedy and mcts (200 iterations per
move) round-robin, {DEFAULT_GAMES} games per pairing on duplicate deals, 2 games at a time,
on a local server it starts and stops itself: 8 to 14 s on a busy 2-core machine
(docs/tournament.md, "The demo").

Every game is a one-game match created on the server. Each seat is played by a process
of its own: built-in kinds, `text:` engines and `serve:` commands are kept alive between
games (one per bot and slot, given each match on stdin); a `cmd:` command is started for
every game.
Each deck seed is played once per seat rotation (2 players: A-B then B-A), so both bots
get the same cards and the luck of the deal cancels out.
"""

EPILOG = f"""\
bot specs (--bot NAME=SPEC; NAME is optional for a built-in kind):
  random                     uniform random legal moves
  greedy                     one-move heuristic
  mcts:iterations=500        ISMCTS; options iterations, time, workers, c, epsilon
  learned, policy:model=F    a trained network; `cirulla bot --help` lists every kind
                             and its options
  text:COMMAND ...           a text-protocol engine (docs/text-protocol.md), e.g.
                             --bot c='text:./text_engine'
  cmd:COMMAND ...            any program that plays one seat, exiting when the match
                             ends; it finds its seat in the environment: CIRULLA_SERVER,
                             CIRULLA_MATCH, CIRULLA_TOKEN (the secret: never on a
                             command line), CIRULLA_SEAT, CIRULLA_NAME, CIRULLA_SEED;
                             in its arguments {{python}} (this runner's interpreter) and
                             {", ".join("{" + p + "}" for p in PLACEHOLDERS)} are replaced, e.g.
      --bot mine='cmd:{{python}} my_bot.py'
  serve:COMMAND ...          a program kept alive between games that reads one match
                             assignment per line on stdin (docs/tournament.md; in Python
                             cirulla.bots.loop.serve(policy) does it all)

players:
  2  pairings of two bots, each seed played twice with seats swapped
  3  groups of three bots (round-robin: every triple; gauntlet: the first bot with every
     pair of the others), each seed played in the 3 seat rotations
  4  partnerships: the two bots of a pairing each take two opposite seats (0+2 vs 1+3)

output, inside --out DIR (default ./{DEFAULT_OUT_ROOT}/<date-time>, printed at the start):
  tournament.json  settings (what --resume rebuilds the schedule from)
  games.jsonl      one line per finished game (the journal)
  results.json     settings, standings with 95% intervals, every game's result and notes
  records/ID.json  the server's record of each game (records/ID.txt: as text)
  logs/BOT-N.log   a kept-alive bot's output (its N-th process); logs/ID-SEAT.log a cmd:
                   bot's in one game; logs/server.log the local server's

examples:
  cirulla tournament
  cirulla tournament --bot random --bot greedy --games 20 --format gauntlet
  cirulla tournament --bot old=mcts:iterations=200 --bot new=mcts:iterations=800 \\
                     --sprt 0 50 0.05 0.05
  cirulla tournament --resume {DEFAULT_OUT_ROOT}/20260101-120000
"""

# Settings that define the schedule: given with --resume they would change the tournament.
_SCHEDULE_ARGS = (
    "bot",
    "bot_limits",
    "bots_file",
    "preset",
    "rule",
    "players",
    "target",
    "format",
    "seed",
    "bot_seed",
    "sprt",
    "deals",
)


def _whole(text: str) -> int:
    """An integer option's value, or argparse's one-line error in words (its own names
    the checking function: ``invalid _positive_int value``)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a whole number, not {text!r}") from None


def _positive_int(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _positive_seconds(text: str) -> float:
    """Seconds above 0 (``--game-timeout``: 0 voided every game of a resumed run at once,
    and a new run took it for the default)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes seconds, not {text!r}") from None
    if not value > 0:  # NaN included
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    parser = commands.add_parser(
        "tournament",
        help="run bots against each other and print a results table (no arguments: demo)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--bot",
        action="append",
        metavar="NAME=SPEC",
        help="a participant (repeat; at least two). Default: " + ", ".join(DEFAULT_BOTS),
    )
    parser.add_argument(
        "--bots-file",
        type=Path,
        metavar="FILE",
        help='TOML file of named bot specs ([bots] name = "spec"); --bot NAME then '
        "picks one, and without --bot every bot of the file plays (docs/tournament.md)",
    )
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="use this running server instead of starting a local one",
    )
    parser.add_argument(
        "--server-bot-socket",
        type=Path,
        metavar="PATH",
        help="with --server and --sandbox: that server's --bot-socket (a unix socket on "
        "this machine), so the sandboxed bots reach its Play rpc and nothing else, as "
        "with the local server; without it they reach every rpc of --server",
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        default=None,
        help="run every bot in a bubblewrap sandbox: its own program and Python read-only, "
        "a private /tmp, no other process, no network but the match server, resource "
        "limits (for third-party bots; docs/tournament.md, 'Untrusted bots')",
    )
    parser.add_argument(
        "--bot-limits",
        action="append",
        default=[],
        metavar="NAME:KEY=VALUE,...",
        help="one bot's own limits under --sandbox, as cutechess's per-engine options: "
        "memory=4G,processes=64,cpu=2 (keys memory, processes, cpu, output, tmp; the "
        "others keep the defaults: memory=2G,processes=256,cpu=1); repeatable",
    )
    parser.add_argument(
        "--bot-logs",
        type=parse_bot_logs,
        default=DEFAULT_BOT_LOGS,
        metavar="SIZE",
        help="what one bot's logs may hold on disk in all (default 256M): past it its "
        "oldest logs are cut to their start and tail, then deleted (docs/tournament.md)",
    )
    parser.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help="the server's admin token, for creating and aborting matches "
        "(default: $CIRULLA_ADMIN_TOKEN)",
    )
    parser.add_argument(
        "--games",
        type=_positive_int,
        metavar="N",
        help=f"games per pairing, rounded up to whole duplicate sets (default {DEFAULT_GAMES}); "
        "with --resume, a larger N extends the tournament",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=2,
        metavar="N",
        help="games played at the same time (default 2)",
    )
    add_rule_arguments(parser, default=None)  # None: --resume can tell it was not given
    parser.add_argument(
        "--target", type=_positive_int, metavar="T", help="points that end a game (default 51)"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="round-robin: every pairing (default); gauntlet: the first bot "
        "against each of the others",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"output folder (default ./{DEFAULT_OUT_ROOT}/<date-time>)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="tournament seed: fixes every deck (default: random, saved)",
    )
    parser.add_argument(
        "--bot-seed",
        type=int,
        metavar="N",
        help="base of the bots' CIRULLA_SEED values, independent of the decks "
        "(default: random, saved)",
    )
    parser.add_argument(
        "--deals",
        type=Path,
        metavar="FILE",
        help="fixed deals, like an opening book: JSON lines, one deck set per line, "
        '{"seed": N} or {"decks": ["40 card codes", ...]} (docs/tournament.md)',
    )
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="continue the tournament in DIR without replaying finished games",
    )
    parser.add_argument(
        "--sprt",
        type=float,
        nargs=4,
        metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
        help="stop each head-to-head pairing once a GSPRT of H0: elo=ELO0 "
        "against H1: elo=ELO1 decides (e.g. 0 50 0.05 0.05)",
    )
    parser.add_argument(
        "--move-limit",
        type=_positive_int,
        metavar="MS",
        help="per-move clock in milliseconds; a bot that runs out (hung, "
        "crashed or only sending illegal actions) loses the game (default 10000)",
    )
    parser.add_argument(
        "--tc",
        metavar="SECONDS[+INC]",
        help="time control: a per-seat time bank for each game, in seconds, plus an "
        "optional increment in seconds added after each move (e.g. 60 or 10+0.1). "
        "Combine with --move-limit",
    )
    parser.add_argument(
        "--tc-margin",
        type=_non_negative_int,
        metavar="MS",
        help="grace in milliseconds past a deadline (move limit or bank) before a bot "
        "loses on time, for network and scheduling delay, like cutechess's timemargin "
        "(default 0)",
    )
    parser.add_argument(
        "--report-every",
        type=_positive_int,
        metavar="N",
        help="print the standings every N finished games",
    )
    parser.add_argument(
        "--game-timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help="wall-clock limit per game, after which it is void (default 600)",
    )
    parser.add_argument(
        "--max-games",
        type=_positive_int,
        metavar="N",
        help="play at most N games in this run (continue later with --resume)",
    )
    parser.add_argument(
        "--recover",
        action="store_true",
        help="go on when a bot never joins its first games (it crashes at start or its "
        f"command is wrong): its games are forfeits, its log's last lines are printed "
        f"once and the run ends with status 1 (default: the tournament stops after "
        f"{START_FAILURES} such games in a row); like cutechess's and fastchess's -recover",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="play the games on the worker pool of this PostgreSQL ladder database "
        "(postgresql://USER@HOST:PORT/NAME) instead of here: every `cirulla ladder worker "
        "--db URL` takes some (docs/tournament.md, 'On the worker pool')",
    )
    parser.set_defaults(func=run_tournament)
    register_bench(bench)


def parse_bot(text: str) -> tuple[str, BotSpec]:
    """``NAME=SPEC`` or just ``SPEC`` (named after its kind), the spec parsed."""
    name, sep, spec = text.partition("=")
    if sep and re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        return name, BotSpec.parse(spec.strip())
    if sep and ":" not in name:
        # a NAME= with a character no name takes (a kind's options have a ':' first)
        raise ValueError(
            f"--bot {text!r}: a bot name uses letters, digits and _ . + -, not {name!r}"
        )
    parsed = BotSpec.parse(text.strip())
    if parsed.form == "cmd":
        raise ValueError(f"--bot {text!r}: a command spec needs a name: --bot NAME='{text}'")
    return parsed.label, parsed


def parse_tc(text: str) -> tuple[int, int]:
    """``--tc 60`` or ``60+0.5``: the per-game bank and the increment, in milliseconds."""
    bank, plus, increment = text.partition("+")
    try:
        seconds = float(bank)
        inc = float(increment) if plus else 0.0  # "10+" is a typo, not an increment of 0
    except ValueError:
        raise ValueError(
            f"--tc takes SECONDS or SECONDS+INC, e.g. 60 or 10+0.1, not {text!r}"
        ) from None
    if not 0 < seconds < 10**7:
        raise ValueError(f"--tc bank must be positive seconds, not {bank!r}")
    if not 0 <= inc < 10**5:
        raise ValueError(f"--tc increment must be seconds >= 0, not {increment!r}")
    return round(seconds * 1000), round(inc * 1000)


def bots_from_args(args: argparse.Namespace) -> dict[str, BotSpec]:
    """The participants, each spec parsed once: --bot entries (names may come from
    --bots-file), or the file's bots, or the demo's."""
    saved = load_bots_file(args.bots_file) if args.bots_file is not None else {}
    bots: dict[str, BotSpec] = {}
    given = args.bot if args.bot else ([] if saved else DEFAULT_BOTS)
    try:
        entries = (
            [(text, saved[text]) if text in saved else parse_bot(text) for text in given]
            if given
            else list(saved.items())
        )
    except ValueError as exc:  # a name the file lacks reads as a spec: say the file's too
        known = f"; {args.bots_file} names {', '.join(saved)}" if saved else ""
        raise ValueError(f"{exc}{known}") from None
    for name, spec in entries:
        if name in bots:
            raise ValueError(f"two bots are named {name!r}; give each a name: --bot NAME=SPEC")
        bots[name] = spec
    return bots


def bot_limits_from_args(
    given: list[str], bots: dict[str, BotSpec], sandbox: bool
) -> dict[str, str]:
    """``--bot-limits NAME:memory=4G,...``, each checked (``parse_limits``) and stored in
    its text form; a ValueError names the option and what is wrong."""
    out: dict[str, str] = {}
    for item in given:
        name, sep, text = item.partition(":")
        if not sep or name not in bots:
            raise ValueError(
                f"--bot-limits {item!r}: NAME:KEY=VALUE,... with NAME one of the bots "
                f"({', '.join(bots)})"
            )
        try:
            limits = parse_limits(text)
        except ValueError as exc:
            raise ValueError(f"--bot-limits {name}: {exc}") from None
        out[name] = limits.text(all_keys=True)
    if out and not sandbox:
        raise ValueError("--bot-limits needs --sandbox (the limits are the sandbox's)")
    return out


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Every argument checked (bots, rules, schedule, SPRT) before anything is written."""
    bots = bots_from_args(args)
    preset = args.preset or "standard"
    rules = rule_overrides(args)
    options = Options.preset(preset, **rules)  # preset-level checks (fantacarte: 2 players)
    bank_ms, increment_ms = parse_tc(args.tc) if args.tc else (0, 0)
    if args.sprt is not None and options.players == 3:
        raise ValueError("--sprt needs head-to-head games: --players 2 or 4")
    settings = Settings(
        bots=bots,
        players=options.players,
        format=args.format or "round-robin",
        games=args.games or DEFAULT_GAMES,
        seed=args.seed if args.seed is not None else new_tournament_seed(),
        bot_seed=args.bot_seed if args.bot_seed is not None else new_bot_seed_base(),
        rules=rules,
        preset=preset,
        move_limit_ms=args.move_limit or 10_000,
        game_bank_ms=bank_ms,
        increment_ms=increment_ms,
        margin_ms=args.tc_margin or 0,
        game_timeout=args.game_timeout or 600.0,
        sprt=tuple(args.sprt) if args.sprt else None,
        deals=load_deals(args.deals) if args.deals is not None else None,
        sandbox=bool(args.sandbox),
        bot_limits=bot_limits_from_args(args.bot_limits, bots, bool(args.sandbox)),
    )
    schedule_of(settings)  # at least two bots, a known format
    if settings.sprt is not None:
        Sprt(*settings.sprt)  # elo0 < elo1, alpha and beta in (0, 0.5)
    return settings


def resume_settings(args: argparse.Namespace) -> Settings:
    given = [
        f"--{a.replace('_', '-')}" for a in _SCHEDULE_ARGS if getattr(args, a) not in (None, [])
    ]
    if given or args.out is not None:
        raise ValueError(
            f"--resume takes the settings from {args.resume}/tournament.json; "
            f"drop {', '.join(given + (['--out'] if args.out else []))}"
        )
    settings = load_settings(args.resume)  # its specs parsed: a retired {token} refused
    changes: dict[str, Any] = {}
    if args.games is not None and args.games < settings.games:
        raise ValueError(f"--games {args.games}: the run has {settings.games}; it can only grow")
    if args.games is not None and args.games > settings.games:
        changes["games"] = args.games
    if args.move_limit is not None:
        changes["move_limit_ms"] = args.move_limit
    if args.game_timeout is not None:
        changes["game_timeout"] = args.game_timeout
    if args.tc is not None:
        changes["game_bank_ms"], changes["increment_ms"] = parse_tc(args.tc)
    if args.tc_margin is not None:
        changes["margin_ms"] = args.tc_margin
    if args.sandbox and not settings.sandbox:
        changes["sandbox"] = True  # a resume may add the sandbox, never drop it
    if settings.bot_seed is None:  # saved before the bots' seeds had their own base
        changes["bot_seed"] = new_bot_seed_base()
    if changes:
        settings = dataclasses.replace(settings, **changes)
        save_settings(args.resume, settings)
    return settings


def check_server_bot_socket(args: argparse.Namespace) -> None:
    """``--server-bot-socket`` names a socket the sandboxed bots of a ``--server`` run
    reach instead of its TCP port: checked before anything is created."""
    path: Path | None = args.server_bot_socket
    if path is None:
        return
    if args.server is None:
        raise ValueError("--server-bot-socket needs --server (a local server has its own)")
    if not (args.sandbox or args.resume):
        raise ValueError("--server-bot-socket needs --sandbox: only sandboxed bots use it")
    if not path.is_socket():
        raise ValueError(f"--server-bot-socket {path}: not a socket (cirulla server --bot-socket)")


def check_server(server: str, admin_token: str | None) -> None:
    """``--server`` answers and takes the admin token, checked before anything is
    written: an ``AbortMatch`` of a match that is not there (NOT_FOUND once the token
    passed; nothing changes on the server) tells both."""
    metadata = (("authorization", f"Bearer {admin_token}"),) if admin_token else ()
    with grpc.insecure_channel(server) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        try:
            stub.AbortMatch(
                match_service_pb2.AbortMatchRequest(
                    match_id="cirulla-tournament-probe", reason="the runner's check"
                ),
                metadata=metadata,
                timeout=10,
            )
        except grpc.RpcError as exc:
            code, details = exc.code(), exc.details()
            if code == grpc.StatusCode.NOT_FOUND:
                return
            if code == grpc.StatusCode.UNAUTHENTICATED:
                raise ValueError(
                    f"--server {server} needs its admin token: --admin-token TOKEN or "
                    "$CIRULLA_ADMIN_TOKEN"
                ) from None
            if code == grpc.StatusCode.PERMISSION_DENIED:
                raise ValueError(f"--server {server}: the admin token is wrong") from None
            if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ValueError(
                    f"--server {server}: no match server answers there ({details})"
                ) from None
            raise ValueError(
                f"--server {server}: not a Cirulla match server? ({code.name}: {details})"
            ) from None


def check_pool_args(db: str, server: str | None) -> None:
    """``--db`` (worker pool) checked before anything is created, the database reached
    (and its schema brought up to date, as the run would): one line if wrong."""
    from cirulla.clients.tournament.pool import check_pool_db, open_pool

    if server is not None:
        raise ValueError("--db and --server exclude each other: the workers host the games")
    check_pool_db(db)
    open_pool(db).engine.dispose()


def _interrupt(signum: int, frame: object) -> None:
    """Ctrl-C and SIGTERM stop the tournament: bots and server are stopped, not orphaned.
    The flag is for the game loop, in case this KeyboardInterrupt lands in a finalizer."""
    INTERRUPTED.set()
    raise KeyboardInterrupt


def run_tournament(args: argparse.Namespace) -> int:
    # the runner's own warnings (a record not fetched...) as the bots and server log them
    setup_logging("warning", "tournament", force=False)
    console = output_console()
    out: Path = (
        args.resume
        or args.out
        or DEFAULT_OUT_ROOT / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    )
    # Imported before the handlers are installed: the handler's import only finds it.

    INTERRUPTED.clear()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    previous_int = signal.signal(signal.SIGINT, _interrupt)
    try:
        if args.db is not None:
            if args.sandbox:
                raise ValueError(
                    "--sandbox and --db exclude each other: the pool's workers start the bots"
                )
            check_pool_args(args.db, args.server)
        check_server_bot_socket(args)
        if args.server is not None:
            check_server(args.server, args.admin_token or os.environ.get("CIRULLA_ADMIN_TOKEN"))
        if args.sandbox:
            sandbox.require()
            # before anything is written there: --out is not the installation bots run from
            sandbox.check_installation((out,))
        if args.resume is None:
            if (out / "tournament.json").exists():
                raise ValueError(
                    f"{out} already holds a tournament; continue it with --resume {out}"
                )
            settings = settings_from_args(args)
            try:
                # the seed, the records (every hand) and the server's database: owner only
                out.mkdir(parents=True, exist_ok=True, mode=0o700)
                out.chmod(0o700)
            except OSError as exc:
                raise ValueError(f"--out {out}: cannot create it ({exc.strerror})") from None
            if not os.access(out, os.W_OK | os.X_OK):
                raise ValueError(f"--out {out}: not writable")
        elif not (out / "tournament.json").exists():
            raise ValueError(f"cannot resume: {out / 'tournament.json'} does not exist")
        with OutputLock(out):
            if args.resume is None:
                save_settings(out, settings)
            else:
                settings = resume_settings(args)
            return _run_locked(args, settings, out, console)
    except (ValueError, OptionError, sandbox.SandboxUnavailable) as exc:
        print(f"cirulla tournament: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        console.print(
            f"[red]interrupted[/]; finished games are saved. Continue with:\n"
            f"  cirulla tournament --resume {out}"
        )
        return 130
    except (RuntimeError, grpc.RpcError) as exc:
        detail = f"{exc.code().name}: {exc.details()}" if isinstance(exc, grpc.RpcError) else exc
        console.print(
            f"[red]cirulla tournament: error: {escape(str(detail))}[/]\nfinished games are "
            f"saved; continue with: cirulla tournament --resume {escape(str(out))}"
        )
        return 1
    except OSError as exc:
        print(f"cirulla tournament: error: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def _run_locked(args: argparse.Namespace, settings: Settings, out: Path, console: Console) -> int:
    schedule = schedule_of(settings)
    admin_token = args.admin_token or os.environ.get("CIRULLA_ADMIN_TOKEN")
    run = RunOptions(
        out,
        args.concurrency,
        args.server,
        admin_token,
        args.max_games,
        args.report_every,
        args.db,
        recover=args.recover,
        server_bot_socket=args.server_bot_socket,
        bot_logs=args.bot_logs,
    )
    tournament = Tournament(settings, run, console)
    per_set = games_per_set(settings.players)
    console.print(
        f"[bold]Tournament[/] {', '.join(f'{n}={s.text}' for n, s in settings.bots.items())}: "
        f"{settings.format}, {settings.players} players, {len(schedule)} games "
        f"({-(-settings.games // per_set) * per_set} per pairing on duplicate deals), "
        f"{len(tournament.done)} already played; output in {out}"
    )
    start = time.monotonic()
    before = len(tournament.done)
    st = tournament.run()
    tournament.print_tables(st)
    left = len(tournament.pending(st))
    seconds = time.monotonic() - start
    total = len(tournament.done)
    # a resumed run counts what it played itself, beside the total it reports on
    played = f"{total - before} games played in {seconds:.0f}s ({total} in all)"
    console.print(
        f"{played if before else f'{total} games in {seconds:.0f}s'}. "
        f"Results: {out / 'results.json'}; records: {out / 'records'}; bot logs: {out / 'logs'}"
    )
    if left:
        console.print(f"{left} games left; continue with: cirulla tournament --resume {out}")
    failed = 0
    for report in tournament.never_joined():
        console.print(report, style="red", markup=False, highlight=False)
        failed = 1
    if tournament.broken_bots:
        console.print(
            f"[red]{', '.join(tournament.broken_bots)} never joined their games (--recover: "
            "played as forfeits, see above); exit status 1[/]"
        )
        failed = 1
    return failed
