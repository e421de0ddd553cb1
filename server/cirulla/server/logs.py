"""Structured log lines (``ts=... level=... logger=... msg``) for the server.

Messages are already ``key=value`` pairs; this adds the time and level so the lines can be
grepped and parsed. Hidden cards are never logged at INFO or above: sessions log ids,
seats and totals only, and actions (public once played) at DEBUG.
"""

from __future__ import annotations

import logging
import time


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        line = (
            f"ts={ts}.{int(record.msecs):03d}Z level={record.levelname} "
            f"logger={record.name} {record.getMessage()}"
        )
        if record.exc_info:
            line += " exc=" + repr(self.formatException(record.exc_info))
        return line


def setup_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(KeyValueFormatter())
    root = logging.getLogger("cirulla")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
