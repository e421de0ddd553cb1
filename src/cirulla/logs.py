"""One log format for every process of the project: logfmt lines on stderr.

The match server, the bots (the kit, the kept-alive loop, the text bridge), the tournament
runner and the ladder all log through ``setup_logging``, so a line of any of their logs
(a tournament keeps one per bot and one for its server) reads the same and parses with
any logfmt parser::

    ts=2026-01-01T12:00:00.123Z level=info proc=server logger=cirulla.server
        match_created match=m-1 players=2
    ts=2026-01-01T12:00:00.150Z level=info proc=greedy logger=cirulla.bots.kit
        msg="joined match m-1 as seat 0"

(each is one line, cut here to fit the page).

``ts`` (UTC, milliseconds), ``level``, ``proc`` (which process: ``server``, the bot's
name, ``tournament``, ``ladder``) and ``logger`` come first. A message that is already
``event key=value ...`` (the server's are) is kept as it is, so its fields stay fields;
any other message becomes one quoted ``msg="..."`` value, and an exception one quoted
``exc="..."`` value: a line never breaks, whatever a bot or an engine writes.

It lives in the base install (``src/cirulla``, no extra needed): bots run on a player's
machine with nothing but the base install. Hidden cards are never logged at INFO or
above by any of these processes (sessions log ids, seats and totals only).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from typing import IO

#: Levels ``--log-level`` takes, shown in lower case and accepted in any case.
LEVELS = ("debug", "info", "warning", "error")

#: A message that is already logfmt: an event name, then ``key=value`` pairs whose values
#: are bare (no space, quote or ``=``) or double-quoted.
_BARE = r'[^\s="]+'
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_STRUCTURED = re.compile(rf"[A-Za-z_][\w.-]*(?: [A-Za-z_][\w.-]*=(?:{_QUOTED}|{_BARE}|(?=\s|$)))*")
_NEEDS_QUOTES = re.compile(r'[\s="\\]|^$')


#: gRPC's core writes its own lines on stderr in its own format (an INFO line "skipping
#: fork() handlers" each time a process starts a bot while gRPC threads run, which lands
#: in that bot's log): only its errors. Read when grpc is first imported.
GRPC_QUIET = ("GRPC_VERBOSITY", "ERROR")
#: No fork handlers in gRPC's core: a runner starts every bot with fork then exec, and
#: with them the forked child restarts gRPC's poller over the epoll descriptor that
#: ``subprocess`` has just closed (close_fds), and aborts before it can exec ("epoll_wait
#: error: Bad file descriptor", exit -6: seen in about 1.5% of bot starts under load; the
#: same diagnosis is in the grpc/grpc tracker, #43055). Nothing here uses gRPC in a child
#: after a fork: every child execs.
GRPC_NO_FORK_HANDLERS = ("GRPC_ENABLE_FORK_SUPPORT", "false")
#: The variables ``quiet_grpc`` sets, which runners pass on to what they start.
GRPC_SETTINGS = (GRPC_QUIET, GRPC_NO_FORK_HANDLERS)


def quiet_grpc() -> None:
    """Keep gRPC's core to its errors and without fork handlers, unless the environment
    says otherwise; call it before grpc is imported (the ``cirulla`` command does, and
    passes both to the bots and the server it starts)."""
    for name, value in GRPC_SETTINGS:
        os.environ.setdefault(name, value)


def quote(value: str) -> str:
    """A logfmt value: bare when it can be, else double-quoted with ``\\``, ``"`` and
    control characters escaped (so it stays on its line)."""
    if not _NEEDS_QUOTES.search(value) and value.isprintable():
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if not escaped.isprintable():
        escaped = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in escaped)
    return f'"{escaped}"'


class LogfmtFormatter(logging.Formatter):
    """``ts=... level=... proc=... logger=... <message>`` (see the module's docstring)."""

    def __init__(self, process: str) -> None:
        super().__init__()
        self.process = quote(process)

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        message = record.getMessage()
        body = message if _STRUCTURED.fullmatch(message) else f"msg={quote(message)}"
        line = (
            f"ts={ts}.{int(record.msecs):03d}Z level={record.levelname.lower()} "
            f"proc={self.process} logger={quote(record.name)} {body}"
        )
        if record.exc_info:
            line += " exc=" + quote(self.formatException(record.exc_info))
        return line


def level_number(level: str | int) -> int:
    """``"info"``, ``"INFO"`` or ``logging.INFO``: the level's number; ValueError names
    the levels for anything else."""
    if isinstance(level, int):
        return level
    if level.lower() not in LEVELS:
        raise ValueError(f"log level {level!r}: one of {', '.join(LEVELS)}")
    return int(getattr(logging, level.upper()))


def setup_logging(
    level: str | int = "info",
    process: str = "cirulla",
    *,
    logger: str | None = None,
    stream: IO[str] | None = None,
    force: bool = True,
) -> None:
    """Log logfmt lines to ``stream`` (stderr) from ``logger`` (None: the root logger)
    at ``level``, as process ``process``. ``force=False`` leaves a logger that already
    has handlers alone (a program that configured logging itself keeps its own)."""
    target = logging.getLogger(logger)
    if target.handlers and not force:
        return
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(LogfmtFormatter(process))
    target.handlers[:] = [handler]
    target.setLevel(level_number(level))
    if logger is not None:
        target.propagate = False


def log_level(text: str) -> str:
    """argparse ``type`` of ``--log-level``: any case in, lower case out."""
    if text.lower() not in LEVELS:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(LEVELS)}, not {text!r}")
    return text.lower()


def add_log_level_argument(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str = "info"
) -> None:
    """``--log-level`` the same way in every command: the levels shown in lower case,
    any case accepted (``INFO`` as well as ``info``)."""
    parser.add_argument(
        "--log-level",
        type=log_level,
        default=default,
        metavar="{" + ",".join(LEVELS) + "}",
        help=f"log lines (logfmt, on stderr) at this level and above (default {default})",
    )
