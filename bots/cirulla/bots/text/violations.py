"""Protocol violations of one engine, kept in bounded memory.

Each violation comes with the exchange that showed it, for ``cirulla bot check`` and the
seat's log. An engine writing garbage commits one violation per line it writes, so only
the first ``MAX_KEPT`` are kept (each exchange cut to ``EXCERPT_CHARS``), only the first
``MAX_LOGGED`` are logged, and the rest are counted.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("cirulla.bots.text")

#: Violations kept with their exchange.
MAX_KEPT = 50
#: Violations written to the log one by one (then only counted).
MAX_LOGGED = 20
#: Characters kept of each exchange (its last ones: where the problem showed).
EXCERPT_CHARS = 4000
#: Distinct problems counted one by one (``Violations.counts``); past them, each new one
#: is counted under ``OTHER_PROBLEMS``.
MAX_DISTINCT = 200
OTHER_PROBLEMS = "other problems (too many distinct ones to count each)"
#: Characters of an engine's text quoted inside a problem's description.
QUOTE_CHARS = 120


def printable(text: str) -> str:
    """``text`` with every control character (escape sequences included) written as
    ``\\xNN``: an engine's output is shown as data, never interpreted by a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """``ascii`` of ``text`` (no control character, no escape sequence), cut to about
    ``limit`` characters."""
    if len(text) <= limit:
        return ascii(text)
    return ascii(text[:limit]) + f"... ({len(text)} characters)"


class Violations:
    """The first violations with their exchange, and how many there were in all."""

    def __init__(self, report: Callable[[str, str], None] | None = None) -> None:
        self.report = report
        self.total = 0
        #: Set when the engine is being stopped: what it does then is not recorded.
        self.closed = False
        self._kept: list[tuple[str, str]] = []
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def kept(self) -> list[tuple[str, str]]:
        """(problem, exchange) of the first ``MAX_KEPT`` violations, in order."""
        with self._lock:
            return list(self._kept)

    @property
    def counts(self) -> dict[str, int]:
        """How often each distinct problem occurred (at most ``MAX_DISTINCT`` of them)."""
        with self._lock:
            return dict(self._counts)

    @property
    def not_kept(self) -> int:
        with self._lock:
            return self.total - len(self._kept)

    def add(self, problem: str, exchange: str) -> None:
        if self.closed:
            return
        with self._lock:
            self.total += 1
            number = self.total
            if problem in self._counts or len(self._counts) < MAX_DISTINCT:
                self._counts[problem] = self._counts.get(problem, 0) + 1
            else:
                self._counts[OTHER_PROBLEMS] = self._counts.get(OTHER_PROBLEMS, 0) + 1
            keep = len(self._kept) < MAX_KEPT
            if keep:
                self._kept.append((problem, exchange[-EXCERPT_CHARS:]))
        if number <= MAX_LOGGED:
            log.warning("protocol violation: %s", problem)
        elif number == MAX_LOGGED + 1:
            log.warning("more protocol violations: counted from now on, not logged")
        if keep and self.report is not None:
            self.report(problem, exchange[-EXCERPT_CHARS:])

    def summary(self) -> None:
        """One log line with the count, if some were not logged."""
        if self.total > MAX_LOGGED:
            log.warning("%d protocol violations in all (%d logged)", self.total, MAX_LOGGED)
