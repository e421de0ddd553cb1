"""The server's log setup: the project's one logfmt format (``cirulla.logs``), as process
``server``.

The server's messages are already ``event key=value`` pairs, which the format keeps as
fields. Hidden cards are never logged at INFO or above: sessions log ids, seats and
totals only, and actions (public once played) at DEBUG.
"""

from __future__ import annotations

import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path

from cirulla.logs import LogfmtFormatter, level_number
from cirulla.logs import setup_logging as _setup

__all__ = ["LogfmtFormatter", "log_to_file", "setup_logging"]


#: The libraries the server runs on whose errors (an exception in an event loop callback,
#: in a gRPC handler) otherwise reached stderr through logging's last resort: a bare
#: message line, then a raw traceback over many lines, in the middle of the logfmt log.
LIBRARY_LOGGERS = ("asyncio", "grpc")


def setup_logging(level: str = "info", process: str = "server") -> None:
    """logfmt lines on stderr for the ``cirulla`` loggers (the server's, the ladder's),
    and for the warnings and errors of ``LIBRARY_LOGGERS`` (a traceback as one quoted
    ``exc`` value)."""
    _setup(level, process, logger="cirulla")
    for name in LIBRARY_LOGGERS:
        _setup(max(level_number(level), logging.WARNING), process, logger=name)


#: ``--log-file``: bytes per file before it is rotated, and rotated files kept (so the
#: log takes at most 6 x 10 MiB, whatever the months).
LOG_FILE_BYTES = 10 * 1024 * 1024
LOG_FILE_BACKUPS = 5


def log_to_file(
    path: str | Path,
    process: str = "cirulla",
    *,
    max_bytes: int = LOG_FILE_BYTES,
    backups: int = LOG_FILE_BACKUPS,
    logger: str | None = "cirulla",
) -> None:
    """Send ``logger``'s lines (as ``setup_logging`` configured it) to ``path`` instead
    of stderr, rotated by size (``path.1`` ... ``path.N``, the standard library's
    RotatingFileHandler): a service that logs a line per game for months keeps a bounded
    log. Created 0600 (the ladder's log names its bots and matches: its own, as the
    ladder's other files; the rotated ones follow the ladder's umask, 077)."""
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600))

    handler = RotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    handler.setFormatter(LogfmtFormatter(process))
    logging.getLogger(logger).handlers[:] = [handler]
