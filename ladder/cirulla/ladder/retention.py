"""How long a ladder keeps its games' records and its bots' logs (``--keep-records``).

A ladder plays for months; its results, ratings and histories (the ladder database)
stay forever, but every game's record (every hand, 3 to 5 KB gzip'd in the match
server's database, as much again in ``records/``) and the bots' logs would fill the
disk. As lichess keeps every game but aiarena keeps replays for a while only, the
operator chooses: ``--keep-records 1000`` keeps the records of the newest 1,000 games,
``--keep-records 30d`` those of the last 30 days. Every ``PRUNE_SECONDS`` a pass:

* removes older records from the match server's database, leaving each id and the
  reason (``Store.prune_records``), so ``GetRecord``, ``cirulla replay`` and the web
  pages answer "record pruned by the ladder's retention (--keep-records 1000)";
* deletes their files in ``records/`` (``.json.gz`` and ``.txt.gz``, or the plain
  ``.json`` and ``.txt`` of an older ladder);
* deletes bot logs in ``logs/`` last written before the oldest record kept (by count)
  or before the window (by days), except those of bot processes still running.

A twin's record is withheld until its pair is over whatever happens to the other's: a
pruned record says only that it is gone.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cirulla.clients.matches.files import safe_name
from cirulla.server.store import Store

log = logging.getLogger("cirulla.ladder")

#: Seconds between two pruning passes: at the fastest pace measured here (about 800
#: games a minute on two cores, random bots) a pass finds about a hundred records.
PRUNE_SECONDS = 5.0
#: The files a game's record may have in ``records/`` (this ladder's, an older one's).
RECORD_SUFFIXES = (".json.gz", ".txt.gz", ".json", ".txt")
_KEEP = re.compile(r"(?P<n>\d+)(?P<days>d?)")


@dataclass(frozen=True)
class Retention:
    """``--keep-records``: the newest ``count`` games' records, or ``days`` days'."""

    text: str
    count: int | None = None
    days: float | None = None

    @property
    def reason(self) -> str:
        """What a reader of a pruned record is told."""
        return f"record pruned by the ladder's retention (--keep-records {self.text})"

    def cutoff(self, now: float) -> str:
        """Records finished before this ISO time go (empty: none by age)."""
        if self.days is None:
            return ""
        return datetime.fromtimestamp(now - self.days * 86_400, UTC).isoformat(
            timespec="milliseconds"
        )


def parse_keep(text: str) -> Retention:
    """``N`` (games) or ``Nd`` (days), N at least 1; ValueError naming the option."""
    found = _KEEP.fullmatch(text.strip().lower())
    if found is None or int(found["n"]) < 1:
        raise ValueError(
            f"--keep-records {text!r}: a number of games (1000) or of days (30d), at least 1"
        )
    n = int(found["n"])
    return (
        Retention(text.strip().lower(), days=float(n))
        if found["days"]
        else Retention(text.strip().lower(), count=n)
    )


@dataclass
class Pruned:
    records: int = 0
    files: int = 0
    logs: int = 0


def prune(
    store: Store,
    data: Path,
    retention: Retention,
    live_logs: Iterable[Path] = (),
    now: float | None = None,
) -> Pruned:
    """One pass of the retention policy over ``store`` and the data folder ``data``."""
    now = time.time() if now is None else now
    matches = store.prune_records(
        retention.reason, keep=retention.count, finished_before=retention.cutoff(now)
    )
    done = Pruned(records=len(matches))
    folder = data / "records"
    for match_id in matches:
        for suffix in RECORD_SUFFIXES:
            path = folder / f"{safe_name(match_id)}{suffix}"
            try:
                path.unlink()
                done.files += 1
            except FileNotFoundError:
                pass
    # Bot logs: those last written before the oldest record still kept (by count), or
    # before the window (by days); none while nothing was pruned by count yet.
    if retention.days is not None:
        before = now - retention.days * 86_400
    elif not store.pruned_any():
        return done  # fewer games than kept so far: every log stays
    else:
        oldest = store.oldest_record_time()
        before = datetime.fromisoformat(oldest).timestamp() if oldest else now
    live = {p.resolve() for p in live_logs}
    for path in (data / "logs").glob("*.log"):
        try:
            if path.stat().st_mtime < before and path.resolve() not in live:
                path.unlink()
                done.logs += 1
        except FileNotFoundError:
            pass
    return done


def prune_loop(
    stop: threading.Event,
    store: Store,
    data: Path,
    retention: Retention,
    live_logs: Callable[[], Iterable[Path]] = lambda: (),
    every: float = PRUNE_SECONDS,
) -> None:
    """Prune every ``every`` seconds until ``stop``: the ladder's retention thread."""
    while True:
        try:
            done = prune(store, data, retention, live_logs())
            if done.records or done.logs:
                log.info(
                    "ladder_pruned records=%d files=%d logs=%d keep=%s",
                    done.records,
                    done.files,
                    done.logs,
                    retention.text,
                )
        except Exception:
            log.exception("ladder_prune_failed")
        if stop.wait(every):
            return
