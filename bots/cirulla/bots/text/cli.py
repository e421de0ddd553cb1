"""The text protocol's commands: ``cirulla bot text -- CMD``, ``cirulla bot check SPEC``
(both reached through ``cirulla bot``) and ``cirulla engine KIND``."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from cirulla.bots import enroll
from cirulla.bots.cgroups import BotLimits, parse_limits
from cirulla.bots.kit import setup_logging
from cirulla.bots.seat_args import add_kind_arguments, play_seat, policy_from_args
from cirulla.bots.specs import KINDS
from cirulla.bots.text.bridge import TextEnginePolicy
from cirulla.bots.text.check import CHECK_GAMES, check_engine
from cirulla.bots.text.engine import run_engine
from cirulla.bots.text.engine_io import COMMAND_TIMEOUT, STOP_GRACE, EngineError
from cirulla.bots.text.limits import add_limit_arguments, limits_from_args
from cirulla.logs import setup_logging as logfmt

ENGINE_DESCRIPTION = """\
Run a built-in bot as a text-protocol engine on stdin/stdout (docs/text-protocol.md),
for other referees, and for `cirulla bot text`:

  cirulla engine greedy
  cirulla bot text --match M1 --token=T -- cirulla engine mcts --iterations 300
"""


#: Seconds the bridge gives its engine between SIGTERM and SIGKILL when it is itself
#: stopped with SIGTERM (a runner waits 3 s before its SIGKILL).
TERM_GRACE = 1.0


def add_bridge_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``cirulla bot text``: the engine's limits and command timeout."""

    group = add_limit_arguments(p)
    group.add_argument(
        "--command-timeout",
        type=_seconds,
        default=COMMAND_TIMEOUT,
        metavar="SECONDS",
        help="seconds the engine may take to answer a command other than genmove "
        f"before the seat gives up (default {COMMAND_TIMEOUT:g})",
    )


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    """The limits ``cirulla bot check`` runs the engine under: the same options, names
    and defaults as ``cirulla ladder add`` (``--processes`` is shared with ``bot text``,
    where it is the user's RLIMIT_NPROC)."""
    group = p.add_argument_group(
        "check: the engine's limits, as on a ladder or in a tournament's sandbox "
        "(docs/ladder.md, 'Per-bot limits')"
    )
    group.add_argument(
        "--memory",
        metavar="SIZE",
        help="check: the engine's memory (resident and its files; default 2G)",
    )
    group.add_argument("--cpu", metavar="CORES", help="check: its CPU quota in cores (default 1)")
    group.add_argument(
        "--limits",
        metavar="KEY=VALUE,...",
        help="check: the same as one list, memory=4G,processes=64,cpu=2 "
        "(the form of tournament --bot-limits and ladder add --limits)",
    )


#: The options only ``cirulla bot check`` reads (``add_check_arguments``).
CHECK_ONLY = ("memory", "cpu", "limits")


def check_limits_from_args(args: argparse.Namespace) -> BotLimits:
    """``--limits``, then ``--memory``, ``--processes`` and ``--cpu`` over the ladder's
    defaults; a ValueError names the option."""

    limits = BotLimits()
    given = getattr(args, "limits", None)
    if given:
        try:
            limits = parse_limits(given, limits)
        except ValueError as exc:
            raise ValueError(f"--limits {exc}") from None
    for key in ("memory", "processes", "cpu"):
        value = getattr(args, key, None)
        if value is not None:
            try:
                limits = parse_limits(f"{key}={value}", limits)
            except ValueError as exc:
                raise ValueError(f"--{key}: {str(exc).split(': ', 1)[-1]}") from None
    return limits


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"takes seconds between 0 and 3600, not {text!r}")
    return value


def _stop_on_sigterm(policy: TextEnginePolicy) -> None:
    """A runner stops a seat with SIGTERM (SIGKILL a few seconds later): stop the engine
    and everything it started first, then exit."""

    def stop(signum: int, frame: object) -> None:
        policy.close(quit_first=False, grace=TERM_GRACE)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def run_text_bot(args: argparse.Namespace, engine: list[str]) -> int:
    """``cirulla bot text [connection options] -- CMD ARGS...``"""

    if not engine:
        print(
            "cirulla bot text: give the engine's command after --: "
            "cirulla bot text -- ./my-engine ARGS",
            file=sys.stderr,
        )
        return 2
    setup_logging(args.log_level, args.name or "text")
    if getattr(args, "ladder", None):
        return _run_text_ladder_bot(args, engine)
    try:
        policy = TextEnginePolicy(
            engine,
            command_timeout=getattr(args, "command_timeout", COMMAND_TIMEOUT),
            limits=limits_from_args(args),
        )
    except EngineError as exc:
        print(f"cirulla bot text: {exc}", file=sys.stderr)
        return 1
    _stop_on_sigterm(policy)
    try:
        policy.start()
    except EngineError as exc:
        print(f"cirulla bot text: {exc}", file=sys.stderr)
        policy.close()
        return 1
    return play_seat(policy, args, "cirulla bot text")


def _run_text_ladder_bot(args: argparse.Namespace, engine: list[str]) -> int:
    """``cirulla bot text --ladder HOST:PORT --bot-name NAME -- CMD``: the engine sits on
    the ladder as a connect-in bot, a fresh engine process for each assigned match (an
    engine keeps no state from one match to the next, as a managed ``text:`` bot).

    The engine is started once first, so a wrong command or protocol is one line and
    exit 1 before enrolling; SIGTERM stops every engine playing, then the process."""

    live: set[TextEnginePolicy] = set()
    lock = threading.Lock()

    class LadderEngine(TextEnginePolicy):
        """An engine of one assigned match, known to the SIGTERM handler until closed."""

        def close(self, quit_first: bool = True, grace: float = STOP_GRACE) -> int | None:
            with lock:
                live.discard(self)
            return super().close(quit_first, grace)

    def make_policy() -> TextEnginePolicy:
        policy = LadderEngine(
            engine,
            command_timeout=getattr(args, "command_timeout", COMMAND_TIMEOUT),
            limits=limits_from_args(args),
        )
        with lock:
            live.add(policy)
        try:
            policy.start()
        except BaseException:
            policy.close()
            raise
        return policy

    try:
        make_policy().close()  # the engine starts and speaks the protocol
    except EngineError as exc:
        print(f"cirulla bot text: {exc}", file=sys.stderr)
        return 1

    def stop(signum: int, frame: object) -> None:
        with lock:
            playing = list(live)
        for policy in playing:
            policy.close(quit_first=False, grace=TERM_GRACE)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    return enroll.run_from_args(args, make_policy)


def run_check(args: argparse.Namespace, rest: list[str]) -> int:
    """``cirulla bot check SPEC``"""
    if len(rest) != 1:
        print(
            "cirulla bot check: give one engine spec, e.g. "
            "cirulla bot check 'text:./my-engine --fast'",
            file=sys.stderr,
        )
        return 2

    try:
        limits = check_limits_from_args(args)
    except ValueError as exc:
        print(f"cirulla bot check: {exc}", file=sys.stderr)
        return 2
    logfmt("error", "check")
    try:
        report = check_engine(
            rest[0],
            seed=args.seed if args.seed is not None else 1,
            games=args.games if args.games is not None else len(CHECK_GAMES),
            limits=limits,
        )
    except (ValueError, RuntimeError) as exc:
        print(f"cirulla bot check: {exc}", file=sys.stderr)
        return 2
    print(report.text())
    return 0 if report.ok else 1


def _run_engine(args: argparse.Namespace) -> int:

    try:
        policy = policy_from_args(args)
    except ValueError as exc:
        print(f"cirulla engine: {exc}", file=sys.stderr)
        return 2
    return run_engine(policy, args.name or policy.name)


def register_engine(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``cirulla engine`` (the bridge's own options are on ``cirulla bot``:
    ``add_bridge_arguments``)."""
    p = commands.add_parser(
        "engine",
        help="run a built-in bot as a text-protocol engine on stdin/stdout",
        description=ENGINE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "kind", choices=sorted(KINDS), metavar="KIND", help=f"bot kind: {', '.join(KINDS)}"
    )
    p.add_argument("--name", help="the name the engine answers to `name`")
    add_kind_arguments(p)
    p.set_defaults(func=_run_engine)
