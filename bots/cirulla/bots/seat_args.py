"""Command-line pieces shared by every way of playing a seat: the connection options
(``cirulla bot`` for built-in kinds and text engines), the kind options (``cirulla bot``
and ``cirulla engine``), and playing the seat with the kit."""

from __future__ import annotations

import argparse
import sys

from cirulla.bots.kit import BotError, run_bot
from cirulla.bots.policy import Policy
from cirulla.bots.specs import KINDS, KindOption, make_policy
from cirulla.bots.text.engine_io import EngineError
from cirulla.logs import add_log_level_argument


def add_connection_arguments(p: argparse.ArgumentParser) -> None:
    """--server, --match, --token, --tls-ca, --name, --retries, --join-timeout,
    --log-level: what every way of playing a seat takes (built-in kinds, text engines)."""
    p.add_argument(
        "--server", metavar="HOST:PORT", help="server address (default: $CIRULLA_SERVER)"
    )
    p.add_argument("--match", metavar="ID", help="match id to join (default: $CIRULLA_MATCH)")
    p.add_argument(
        "--token",
        metavar="TOKEN",
        help="this seat's secret token (default: $CIRULLA_TOKEN); write --token=VALUE",
    )
    p.add_argument(
        "--tls-ca",
        metavar="PEM",
        help="connect with TLS, checking the server against this CA certificate "
        "(default: $CIRULLA_TLS_CA; neither: plaintext)",
    )
    p.add_argument("--name", help="name shown to the other players (default: the kind)")
    p.add_argument(
        "--retries",
        type=int,
        default=8,
        help="reconnection attempts after a dropped stream (8, with backoff)",
    )
    p.add_argument(
        "--join-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="give up if no game starts this long after joining (default 600)",
    )
    add_log_level_argument(p)  # debug logs every message sent and received


def add_kind_arguments(p: argparse.ArgumentParser) -> None:
    """--seed, --option KEY=VALUE and the mcts options."""
    p.add_argument("--seed", type=int, help="seed: same seed and budget, same moves")
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="kind option in generic form, e.g. iterations=500 (repeatable)",
    )
    # One flag per option name: an option several kinds have (learned's and mcts's
    # --endgame) is listed under the first, its help naming each kind's meaning.
    helps: dict[str, list[str]] = {}
    for name, kind in KINDS.items():
        for opt in kind.options:
            helps.setdefault(opt.name, []).append(f"{name}: {opt.help}")
    for name, kind in KINDS.items():
        fresh = [opt for opt in kind.options if helps.get(opt.name)]
        if not fresh:
            continue
        group = p.add_argument_group(f"{name} options")
        for opt in fresh:
            texts = helps.pop(opt.name)
            group.add_argument(
                f"--{opt.name}",
                dest=f"opt_{opt.name}",
                type=opt.type,
                metavar=opt.name.upper(),
                help=opt.help if len(texts) == 1 else "; ".join(texts),
            )


def _kind_options() -> list[KindOption]:
    """Every kind's options, each name once (a flag per option name)."""
    seen: dict[str, KindOption] = {}
    for kind in KINDS.values():
        for opt in kind.options:
            seen.setdefault(opt.name, opt)
    return list(seen.values())


def policy_from_args(args: argparse.Namespace) -> Policy:
    """The policy ``args.kind`` with its options; ``ValueError`` says what is wrong."""
    kind = KINDS[args.kind]
    options: dict[str, object] = {}
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--option takes key=value, got {item!r}")
        options[key.strip().replace("-", "_")] = value
    for opt in _kind_options():
        value = getattr(args, f"opt_{opt.name}", None)
        if value is not None:
            kind.option(opt.name)  # says which options this kind has, if not this one
            options[opt.name] = value
    return make_policy(args.kind, options, seed=args.seed)


def play_seat(policy: Policy, args: argparse.Namespace, command: str) -> int:
    """Play the seat the connection options name; exit status 0, or 1 with one line."""
    try:
        run_bot(
            policy,
            server=args.server,
            match_id=args.match,
            token=args.token,
            name=args.name or policy.name,
            retries=args.retries,
            tls_ca=args.tls_ca,
            join_timeout=args.join_timeout,
            log_level=args.log_level,
        )
    except (BotError, EngineError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 1
    finally:
        close = getattr(policy, "close", None)
        if close is not None:
            close()
    return 0
