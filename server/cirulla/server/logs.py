"""The server's log setup: the project's one logfmt format (``cirulla.logs``), as process
``server``.

The server's messages are already ``event key=value`` pairs, which the format keeps as
fields. Hidden cards are never logged at INFO or above: sessions log ids, seats and
totals only, and actions (public once played) at DEBUG.
"""

from __future__ import annotations

from cirulla.logs import LogfmtFormatter
from cirulla.logs import setup_logging as _setup

__all__ = ["LogfmtFormatter", "setup_logging"]


def setup_logging(level: str = "info", process: str = "server") -> None:
    """logfmt lines on stderr for the ``cirulla`` loggers (the server's, the ladder's)."""
    _setup(level, process, logger="cirulla")
