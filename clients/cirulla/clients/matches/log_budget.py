"""What one bot's logs may hold on disk in all (``--bot-logs``, 256 MiB by default).

Each log file is bounded on its own (``BotLimits.file_bytes``, RLIMIT_FSIZE: 64 MiB),
but a bot writes a new one every game (a ``cmd:`` seat) or every process (a kept-alive
one), so a bot that writes just under that bound every game and plays well would fill
the disk by as much a game. A ``LogBudget`` follows every log file of each bot of a run
(a tournament, a ladder worker's matches) in the order they were opened, and whenever
one of them is closed (its game or process is over) it brings the bot's files back
under the budget, oldest first:

* first it cuts each closed file, the oldest first, to its start (``HEAD_BYTES``) and
  its tail (``TAIL_BYTES``, what ``log_tail`` and the ladder's ``logs`` read), with one
  line between them saying how much was cut and why;
* if that is not enough (many small files), it deletes the oldest closed files.

Files still written (a game in play, a kept-alive process) are never touched: each is
bounded by its own limit, which is never above the budget (``cap``). So a bot's logs
hold at most the budget once its games are over, plus what its games in play write
meanwhile (at most its file limit each). An honest bot that writes a few KB a game
never reaches it; nor do its logs while it plays.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import threading
from pathlib import Path

from cirulla.bots.cgroups import MIB, BotLimits, format_bytes, parse_bytes

log = logging.getLogger("cirulla.bots")

#: The budget of a bot's logs when the operator gives none.
DEFAULT_BOT_LOGS = 256 * MIB
#: The smallest budget accepted: below it the kept start and tail of a log alone fill it.
MIN_BOT_LOGS = 1 * MIB
#: Bytes kept from the start of a cut log (how the bot started, what it said first).
HEAD_BYTES = 16 * 1024
#: Bytes kept from the end of a cut log (what it said last, its last match's part).
TAIL_BYTES = 64 * 1024
#: What a cut log keeps, its note aside: a file this small is never cut.
KEPT_BYTES = HEAD_BYTES + TAIL_BYTES


def bot_logs_bytes(text: str) -> int:
    """``256M``, ``1G``: a budget of at least ``MIN_BOT_LOGS``; a ValueError in words
    (without the option's name) otherwise."""
    try:
        value = parse_bytes(text, "size")
    except ValueError:
        raise ValueError(f"takes a size like 256M or 1G, not {text!r}") from None
    if value < MIN_BOT_LOGS:
        raise ValueError(f"must be at least 1M, not {text!r}")
    return value


def parse_bot_logs(text: str) -> int:
    """``bot_logs_bytes`` as an argparse type (its error one line after the option's name)."""
    try:
        return bot_logs_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class LogBudget:
    """Every log file of each bot, oldest first, kept under ``budget`` bytes per bot."""

    def __init__(self, budget: int = DEFAULT_BOT_LOGS) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        #: each bot's files in the order they were opened
        self._files: dict[str, list[Path]] = {}
        #: the bot of each file, and how many processes write it now
        self._owner: dict[Path, str] = {}
        self._writers: dict[Path, int] = {}

    def cap(self, limits: BotLimits) -> BotLimits:
        """``limits`` with its file limit no higher than the budget (one log never
        passes it alone)."""
        if limits.file_bytes <= self.budget:
            return limits
        return dataclasses.replace(limits, file_bytes=self.budget)

    def opened(self, bot: str, path: Path) -> None:
        """A process of ``bot`` writes ``path`` now (its log for a game or a process)."""
        with self._lock:
            if path not in self._owner:
                self._owner[path] = bot
                self._files.setdefault(bot, []).append(path)
            self._writers[path] = self._writers.get(path, 0) + 1

    def closed(self, path: Path) -> None:
        """The process writing ``path`` is gone: its bot's logs are brought back under
        the budget (this file included)."""
        with self._lock:
            bot = self._owner.get(path)
            left = self._writers.get(path, 0) - 1
            if left > 0:
                self._writers[path] = left
            else:
                self._writers.pop(path, None)
        if bot is not None:
            self.settle(bot)

    def known(self, bot: str, path: Path) -> None:
        """A closed log of ``bot`` from before (a resumed tournament's games)."""
        with self._lock:
            if path not in self._owner:
                self._owner[path] = bot
                self._files.setdefault(bot, []).append(path)

    def total(self, bot: str) -> int:
        """The bytes ``bot``'s logs hold now."""
        with self._lock:
            paths = list(self._files.get(bot, ()))
        return sum(_size(p) for p in paths)

    def settle(self, bot: str) -> None:
        """Cut, then delete, ``bot``'s oldest closed logs until they fit the budget."""
        with self._lock:
            paths = self._files.get(bot, [])
            sizes = {p: _size(p) for p in paths}
            for gone in [p for p in paths if sizes[p] < 0]:  # pruned (--keep-records)
                self._forget(bot, gone)
            total = sum(s for s in sizes.values() if s > 0)
            if total <= self.budget:
                return
            closed = [p for p in self._files.get(bot, []) if p not in self._writers]
            cut = dropped = 0
            for path in closed:
                if total <= self.budget:
                    break
                if sizes[path] > KEPT_BYTES + 200:
                    now = _cut(path, bot, self.budget)
                    if now >= 0:
                        total -= sizes[path] - now
                        sizes[path] = now
                        cut += 1
            for path in closed:
                if total <= self.budget:
                    break
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                total -= max(sizes[path], 0)
                self._forget(bot, path)
                dropped += 1
        if cut or dropped:
            log.warning(
                "bot_logs_over_budget bot=%s cut=%d dropped=%d bytes=%d budget=%d",
                bot,
                cut,
                dropped,
                total,
                self.budget,
            )

    def _forget(self, bot: str, path: Path) -> None:
        self._owner.pop(path, None)
        with contextlib.suppress(ValueError):
            self._files[bot].remove(path)


def _size(path: Path) -> int:
    """Its size, or -1 when it is gone."""
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _cut(path: Path, bot: str, budget: int) -> int:
    """Keep ``path``'s start and tail (whole lines where it can) with one line between
    saying what was cut, written whole or not at all, its time of last write kept (the
    retention's age); its new size, or -1 if it could not be done."""
    try:
        stat = path.stat()
        with path.open("rb") as f:
            head = f.read(HEAD_BYTES)
            f.seek(max(stat.st_size - TAIL_BYTES, len(head)))
            tail = f.read()
        newline = head.rfind(b"\n")
        head = head[: newline + 1] if newline >= 0 else head
        newline = tail.find(b"\n")
        tail = tail[newline + 1 :] if 0 <= newline < len(tail) - 1 else tail
        gone = stat.st_size - len(head) - len(tail)
        note = (
            f"cirulla: {gone:,} bytes of this log cut here: {bot}'s logs passed "
            f"their budget ({format_bytes(budget)}, --bot-logs)\n"
        ).encode()
        if head and not head.endswith(b"\n"):
            note = b"\n" + note
        tmp = path.with_name(f".{path.name}.cut")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(head + note + tail)
        os.utime(tmp, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        os.replace(tmp, path)
        return len(head) + len(note) + len(tail)
    except OSError:
        log.exception("bot_log_cut_failed log=%s", path)
        return -1
