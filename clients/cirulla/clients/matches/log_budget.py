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
import re
import threading
from collections.abc import Iterable
from pathlib import Path

from cirulla.bots.cgroups import MIB, BotLimits, format_bytes, parse_bytes
from cirulla.clients.matches.files import safe_name
from cirulla.clients.matches.journal import GameResult

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


def bot_logs_option(text: str | None) -> int:
    """``--bot-logs`` of the ladder's commands, given or not: the budget, or a ValueError
    naming the option (their own one-line refusal prints it)."""
    if text is None:
        return DEFAULT_BOT_LOGS
    try:
        return bot_logs_bytes(text)
    except ValueError as exc:
        raise ValueError(f"--bot-logs: {exc}") from None


def parse_bot_logs(text: str) -> int:
    """``bot_logs_bytes`` as an argparse type (its error one line after the option's name)."""
    try:
        return bot_logs_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: Closes of one bot's logs between two full passes over its files (a pass forgets the
#: logs ``--keep-records`` deleted; between passes sizes come from what was noted).
RECOUNT_EVERY = 1000
#: A bot's log: a kept-alive process's ``<safe bot name>-<number>.log`` (``BotPool._spawn``)
#: or a ``cmd:`` seat's ``<safe match id>-<seat>.log`` (``Referee._command_seat``).
LOG_NAME = re.compile(r"(?P<stem>.+)-(?P<number>[0-9]+)\.log")


class LogBudget:
    """Every log file of each bot, oldest first, kept under ``budget`` bytes per bot.

    A closed log does not grow: its size is noted when it is closed, so a game's end
    costs a look at the bot's logs still written only; all its files are looked at
    again (``_recount``) when the noted total passes the budget, and every
    ``RECOUNT_EVERY`` closes (files pruned meanwhile are forgotten)."""

    def __init__(self, budget: int = DEFAULT_BOT_LOGS) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        #: each bot's files in the order they were opened
        self._files: dict[str, list[Path]] = {}
        #: the bot of each file; how many processes write it now
        self._owner: dict[Path, str] = {}
        self._writers: dict[Path, int] = {}
        self._live: dict[str, set[Path]] = {}
        #: each closed file's size when it was closed (or cut), and their sum per bot
        self._sizes: dict[Path, int] = {}
        self._closed_bytes: dict[str, int] = {}
        self._closes: dict[str, int] = {}

    def cap(self, limits: BotLimits) -> BotLimits:
        """``limits`` with its file limit no higher than the budget (one log never
        passes it alone)."""
        if limits.file_bytes <= self.budget:
            return limits
        return dataclasses.replace(limits, file_bytes=self.budget)

    def opened(self, bot: str, path: Path) -> None:
        """A process of ``bot`` writes ``path`` now (its log for a game or a process)."""
        with self._lock:
            self._add(bot, path)
            self._unnote(path)
            self._writers[path] = self._writers.get(path, 0) + 1
            self._live.setdefault(bot, set()).add(path)

    def closed(self, path: Path) -> None:
        """The process writing ``path`` is gone: its bot's logs are brought back under
        the budget (this file included)."""
        with self._lock:
            bot = self._owner.get(path)
            left = self._writers.get(path, 0) - 1
            if left > 0:
                self._writers[path] = left
                return
            if path not in self._writers:
                return  # closed already
            del self._writers[path]
            if bot is not None:
                self._live.get(bot, set()).discard(path)
                self._note(bot, path, _size(path))
                self._closes[bot] = self._closes.get(bot, 0) + 1
        if bot is not None:
            self.settle(bot)

    def known(self, bot: str, path: Path) -> None:
        """A closed log of ``bot`` from before (a resumed tournament's games)."""
        with self._lock:
            if path not in self._owner:
                self._add(bot, path)
                self._note(bot, path, _size(path))

    def count_earlier(self, logs: Iterable[tuple[str, Path]]) -> int:
        """Closed logs left by an earlier run, each with its bot, counted oldest (last
        written) first, then each of their bots brought back under the budget; how many
        files were counted (those gone meanwhile are not)."""
        dated: list[tuple[float, str, str, Path]] = []
        for bot, path in logs:
            with contextlib.suppress(OSError):
                if path.is_file():
                    dated.append((path.stat().st_mtime, path.name, bot, path))
        dated.sort()
        for _, _, bot, path in dated:
            self.known(bot, path)
        for bot in sorted({bot for _, _, bot, _ in dated}):
            self.settle(bot)
        return len(dated)

    def total(self, bot: str) -> int:
        """The bytes ``bot``'s logs hold now (every file looked at)."""
        with self._lock:
            paths = list(self._files.get(bot, ()))
        return sum(max(_size(p), 0) for p in paths)

    def settle(self, bot: str) -> None:
        """Cut, then delete, ``bot``'s oldest closed logs until they fit the budget."""
        with self._lock:
            live = self._live.get(bot, ())
            total = self._closed_bytes.get(bot, 0) + sum(max(_size(p), 0) for p in live)
            if total <= self.budget and self._closes.get(bot, 0) < RECOUNT_EVERY:
                return
            self._closes[bot] = 0
            total = self._recount(bot)
            cut = 0
            closed = [p for p in self._files.get(bot, []) if p not in self._writers]
            for path in closed:
                if total <= self.budget:
                    break
                if self._sizes[path] > KEPT_BYTES + 200:
                    now = _cut(path, bot, self.budget)
                    if now >= 0:
                        total -= self._sizes[path] - now
                        self._note(bot, path, now)
                        cut += 1
            gone: set[Path] = set()
            for path in closed:
                if total <= self.budget:
                    break
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                total -= self._sizes[path]
                gone.add(path)
            self._forget(bot, gone)
            dropped = len(gone)
        if cut or dropped:
            log.warning(
                "bot_logs_over_budget bot=%s cut=%d dropped=%d bytes=%d budget=%d",
                bot,
                cut,
                dropped,
                total,
                self.budget,
            )

    def _recount(self, bot: str) -> int:
        """Every file of ``bot`` looked at (under the lock): the gone forgotten, the
        closed ones' sizes noted; the bytes they hold."""
        total = 0
        gone: set[Path] = set()
        for path in self._files.get(bot, ()):
            size = _size(path)
            if size < 0 and path not in self._writers:
                gone.add(path)  # pruned (--keep-records)
                continue
            if path not in self._writers:
                self._note(bot, path, size)
            total += max(size, 0)
        self._forget(bot, gone)
        return total

    def _add(self, bot: str, path: Path) -> None:
        if path not in self._owner:
            self._owner[path] = bot
            self._files.setdefault(bot, []).append(path)

    def _note(self, bot: str, path: Path, size: int) -> None:
        self._unnote(path)
        self._sizes[path] = max(size, 0)
        self._closed_bytes[bot] = self._closed_bytes.get(bot, 0) + max(size, 0)

    def _unnote(self, path: Path) -> None:
        size = self._sizes.pop(path, None)
        bot = self._owner.get(path)
        if size is not None and bot is not None:
            self._closed_bytes[bot] -= size

    def _forget(self, bot: str, paths: set[Path]) -> None:
        if not paths:
            return
        for path in paths:
            self._unnote(path)
            self._owner.pop(path, None)
        self._files[bot] = [p for p in self._files.get(bot, []) if p not in paths]


def earlier_logs(
    out: Path, results: Iterable[GameResult], bots: Iterable[str]
) -> list[tuple[str, Path]]:
    """The logs an earlier run of a tournament left in ``out/logs``, each with its bot: a
    game's seat logs by its journaled result (``GameResult.logs``: only plain files of
    ``logs/``, whatever a result says); a kept-alive process's ``<bot>-<N>.log``
    (``BotPool``) by its name, when the name is no game's log and its stem is exactly one
    of ``bots``' safe names. Any other file is left to ``--keep-records``."""
    folder = out / "logs"
    found: dict[Path, str] = {}
    for result in results:
        for bot, logged in zip(result.seats, result.logs, strict=False):
            parent, _, name = logged.rpartition("/")
            if parent == "logs" and name.endswith(".log") and safe_name(name) == name:
                found.setdefault(folder / name, bot)
    by_stem: dict[str, list[str]] = {}
    for bot in bots:
        by_stem.setdefault(safe_name(bot), []).append(bot)
    named: dict[Path, str] = {}
    for path in folder.glob("*.log"):
        stem = LOG_NAME.fullmatch(path.name)
        owners = by_stem.get(stem["stem"], []) if stem else []
        if path not in found and len(owners) == 1:
            named[path] = owners[0]
    return [(bot, path) for path, bot in (*found.items(), *named.items())]


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
