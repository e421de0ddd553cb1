"""The server's SQLite database: the one module that knows the schema.

Records of finished games must outlive the server process (the tournament runner and
``cirulla replay`` read them later), so every finished game is written here as a JSON
document beside a few indexed columns. WAL mode lets readers (``cirulla replay --db``)
open the file while a server is writing to it.

A record is stored gzip-compressed (a BLOB: about 25 KB of JSON becomes 3 to 4 KB, so a
ladder that plays for months does not fill its disk with hands); a record written as
TEXT by an older server is read as it is. A record removed by a retention policy
(``prune_records``, the ladder's ``--keep-records``) leaves its id and the reason in
``pruned_records``, so a reader is told why it is gone rather than that it never was.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from cirulla.server.documents import GameRecord, MatchSummary, RoomSummary

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    match_id    TEXT PRIMARY KEY,
    room_id     TEXT NOT NULL DEFAULT '',
    created     TEXT NOT NULL,
    status      TEXT NOT NULL,
    summary     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rooms (
    room_id     TEXT PRIMARY KEY,
    created     TEXT NOT NULL,
    summary     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id   TEXT UNIQUE NOT NULL,
    match_id    TEXT NOT NULL,
    room_id     TEXT NOT NULL DEFAULT '',
    game_number INTEGER NOT NULL,
    finished    TEXT NOT NULL,
    record      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_match ON records (match_id);
-- records removed by a retention policy: the id stays, with why it went
CREATE TABLE IF NOT EXISTS pruned_records (
    record_id   TEXT PRIMARY KEY,
    match_id    TEXT NOT NULL,
    finished    TEXT NOT NULL,
    reason      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_room ON records (room_id);
-- deal-group lookups after a restart (server/cirulla/server/dealgroups.py): no full scan per group
CREATE INDEX IF NOT EXISTS matches_deal_group ON matches (json_extract(summary, '$.deal_group'));
"""

#: Records kept decoded after they are written: a tournament reads each record once,
#: right after its game, and decoding its JSON again cost more of the server's time than
#: anything else a record read does. Records never change once stored.
RECENT_RECORDS = 128
#: gzip's level for stored records: 5 is within 7% of 6's size (the default, itself
#: within 5% of 9's) on records at about half its time (0.63 against 1.13 ms a record of
#: ~100 KB of JSON; 9's takes three times 6's). Any level reads back the same.
COMPRESS_LEVEL = 5
#: Records pruned per statement (``prune_records`` runs until none is left): a ladder
#: turning retention on over months of records does not hold the lock for long.
PRUNE_BATCH = 500


@dataclass(slots=True)
class _RecentText:
    """A recent record kept as its JSON ``text`` until first read, and the record without
    its actions and events (``shell``: the fields a summary, a listing and the access rule
    read), decoded as the text would be at its first read (``Store.record_shell``)."""

    text: str
    shell: GameRecord
    decoded: bool = False


def _as_decoded(record: GameRecord) -> GameRecord:
    """``record`` as it reads back from its stored JSON (lists for tuples, and so on)."""
    return cast(GameRecord, json.loads(json.dumps(record, separators=(",", ":"))))


def pack_record(text: str) -> bytes:
    """A record's JSON as it is stored: gzip (mtime 0, so equal records store equal)."""
    return gzip.compress(text.encode("utf-8"), COMPRESS_LEVEL, mtime=0)


def unpack_record(value: str | bytes) -> str:
    """A stored record's JSON: TEXT from an older server as it is, a BLOB un-gzipped."""
    if isinstance(value, bytes):
        return gzip.decompress(value).decode("utf-8")
    return value


class Store:
    """Thread-safe access to one database file (``:memory:`` works for tests)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        #: The last records written, decoded (shared: callers must not change them), or
        #: their JSON text until first read (``save_record_text``).
        self._recent: OrderedDict[str, GameRecord | _RecentText] = OrderedDict()
        try:
            if self.path != ":memory:" and not os.path.exists(self.path):
                # records hold every hand and deck: readable by the owner only (SQLite
                # gives its -wal and -shm files the same mode)
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise OSError(f"database {self.path}: {detail}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ records

    def save_record(self, record: GameRecord) -> None:
        """Store a finished game; a record id already stored raises ``sqlite3.IntegrityError``
        (records are never overwritten)."""
        self._insert_record(
            record, json.dumps(record, separators=(",", ":"), check_circular=False), record
        )

    def save_record_text(self, record: GameRecord, text: str) -> None:
        """``save_record`` of a record given as its JSON ``text`` (``record`` gives the
        row's columns only: its actions and events may be left out, as
        ``recordkeeping.record_text`` does; then ``record_shell`` reads it). The text is
        decoded when the record is first read (``recordkeeping.record_text`` writes it
        without building the record's entries)."""
        self._insert_record(record, text, _RecentText(text, record))

    def _insert_record(
        self, record: GameRecord, text: str, recent: GameRecord | _RecentText
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO records "
                "(record_id, match_id, room_id, game_number, finished, record) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    record["record_id"],
                    record["match_id"],
                    record.get("room_id", ""),
                    record["game_number"],
                    record.get("finish_time", ""),
                    pack_record(text),
                ),
            )
            self._recent[record["record_id"]] = recent
            if len(self._recent) > RECENT_RECORDS:
                self._recent.popitem(last=False)

    def _recent_record(self, record_id: str) -> GameRecord | None:
        """(under the lock) A recent record, decoded now if it was kept as its text."""
        recent = self._recent.get(record_id)
        if isinstance(recent, _RecentText):
            recent = self._recent[record_id] = cast(GameRecord, json.loads(recent.text))
        return recent

    def _recent_shell(self, record_id: str) -> GameRecord | None:
        """(under the lock) A recent record without decoding its actions and events if
        they are still text: its ``shell`` (their lists empty), else the record."""
        recent = self._recent.get(record_id)
        if isinstance(recent, _RecentText):
            if not recent.decoded:
                recent.shell, recent.decoded = _as_decoded(recent.shell), True
            return recent.shell
        return recent

    def record_shell(self, record_id: str) -> GameRecord | None:
        """A record this store wrote and still keeps among the recent ones (None for any
        other, even one stored), read as ``get_record`` reads it except that its actions
        and events may be empty lists (those of a record kept as its text are not
        decoded): what a summary and the access rule read, and what ``GetRecord``
        completes with the game's own actions and events while its match is in memory."""
        with self._lock:
            return self._recent_shell(record_id)

    def get_record(self, record_id: str) -> GameRecord | None:
        """The stored record (do not change it: a recent one is shared)."""
        with self._lock:
            recent = self._recent_record(record_id)
            if recent is not None:
                return recent
            row = self._db.execute(
                "SELECT record FROM records WHERE record_id = ?", (record_id,)
            ).fetchone()
        return cast(GameRecord, json.loads(unpack_record(row[0]))) if row else None

    def pruned(self, record_id: str) -> str | None:
        """Why ``record_id`` is no longer stored (``prune_records``' reason), or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT reason FROM pruned_records WHERE record_id = ?", (record_id,)
            ).fetchone()
        return str(row[0]) if row else None

    def pruned_any(self) -> bool:
        """Whether any record was pruned from this database."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM pruned_records LIMIT 1").fetchone() is not None

    def oldest_record_time(self) -> str:
        """The finish time of the oldest record still stored (empty: none)."""
        with self._lock:
            row = self._db.execute("SELECT finished FROM records ORDER BY seq LIMIT 1").fetchone()
        return str(row[0]) if row else ""

    def prune_records(
        self, reason: str, *, keep: int | None = None, finished_before: str = ""
    ) -> list[str]:
        """Remove the records beyond the newest ``keep`` and those finished before
        ``finished_before`` (an ISO time, as ``finish_time``), leaving their ids and
        ``reason`` in ``pruned_records``; the match ids whose records went, oldest first.

        Freed pages are reused by the next records (SQLite does not shrink its file), so
        the file stops growing once as many records are pruned as are written."""
        if keep is None and not finished_before:
            return []
        cut = 0
        with self._lock:
            if keep is not None:
                row = self._db.execute(
                    "SELECT seq FROM records ORDER BY seq DESC LIMIT 1 OFFSET ?", (max(keep, 0),)
                ).fetchone()
                cut = max(cut, int(row[0]) if row else 0)
            if finished_before:
                row = self._db.execute(
                    "SELECT max(seq) FROM records WHERE finished < ?", (finished_before,)
                ).fetchone()
                cut = max(cut, int(row[0]) if row and row[0] is not None else 0)
        matches: list[str] = []
        while cut:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    rows = self._db.execute(
                        "SELECT seq, record_id, match_id, finished FROM records WHERE seq <= ? "
                        "ORDER BY seq LIMIT ?",
                        (cut, PRUNE_BATCH),
                    ).fetchall()
                    self._db.executemany(
                        "INSERT OR REPLACE INTO pruned_records "
                        "(record_id, match_id, finished, reason) VALUES (?, ?, ?, ?)",
                        [(r[1], r[2], r[3], reason) for r in rows],
                    )
                    if rows:
                        self._db.execute("DELETE FROM records WHERE seq <= ?", (rows[-1][0],))
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                for r in rows:
                    self._recent.pop(r[1], None)
            matches += (r[2] for r in rows)
            if len(rows) < PRUNE_BATCH:
                break
        return list(dict.fromkeys(matches))

    def list_records(
        self,
        *,
        match_id: str = "",
        room_id: str = "",
        limit: int = 100,
        offset: int = 0,
        shells: bool = False,
    ) -> list[GameRecord]:
        """Newest first (do not change them: recent ones are shared). With ``shells``,
        a recent record kept as its text is given as its ``record_shell`` (its actions and
        events empty: enough for its summary), not decoded."""
        sql = "SELECT record_id, record FROM records WHERE 1=1"
        args: list[str | int] = []
        if match_id:
            sql += " AND match_id = ?"
            args.append(match_id)
        if room_id:
            sql += " AND room_id = ?"
            args.append(room_id)
        sql += " ORDER BY seq DESC LIMIT ? OFFSET ?"
        args += [limit, offset]
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
            read = self._recent_shell if shells else self._recent_record
            recent = [read(record_id) for record_id, _ in rows]
        return [
            known if known is not None else cast(GameRecord, json.loads(unpack_record(text)))
            for known, (_, text) in zip(recent, rows, strict=True)
        ]

    # ------------------------------------------------------------------ matches and rooms

    def insert_match(self, summary: MatchSummary) -> bool:
        """Store a new match; False (and nothing written) if its id is already taken."""
        try:
            with self._lock:
                self._db.execute(
                    "INSERT INTO matches (match_id, room_id, created, status, summary) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        summary["match_id"],
                        summary.get("room_id", ""),
                        summary["create_time"],
                        summary["status"],
                        json.dumps(summary, separators=(",", ":")),
                    ),
                )
        except sqlite3.IntegrityError:
            return False
        return True

    def save_match(self, summary: MatchSummary) -> None:
        """Update a stored match (``insert_match`` created it): status and summary."""
        with self._lock:
            self._db.execute(
                "UPDATE matches SET status = ?, summary = ? WHERE match_id = ?",
                (
                    summary["status"],
                    json.dumps(summary, separators=(",", ":")),
                    summary["match_id"],
                ),
            )

    def count_matches(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM matches").fetchone()[0])

    def abort_interrupted(self, reason: str) -> list[str]:
        """Mark every waiting or in-progress match aborted with ``reason``; their ids.

        At start-up nothing is live yet, so such a match was cut off when a previous
        server process stopped (or was killed): it can never go on.
        """
        with self._lock:
            rows = self._db.execute(
                "UPDATE matches SET status = 'aborted', "
                "summary = json_set(summary, '$.status', 'aborted', '$.abort_reason', ?) "
                "WHERE status IN ('waiting', 'in_progress') RETURNING match_id",
                (reason,),
            ).fetchall()
        return [r[0] for r in rows]

    def get_match(self, match_id: str) -> MatchSummary | None:
        with self._lock:
            row = self._db.execute(
                "SELECT summary FROM matches WHERE match_id = ?", (match_id,)
            ).fetchone()
        return cast(MatchSummary, json.loads(row[0])) if row else None

    def list_matches(
        self, *, status: str = "", limit: int = 100, offset: int = 0
    ) -> list[MatchSummary]:
        sql = "SELECT summary FROM matches"
        args: list[str | int] = []
        if status:
            sql += " WHERE status = ?"
            args.append(status)
        sql += " ORDER BY created DESC, rowid DESC LIMIT ? OFFSET ?"
        args += [limit, offset]
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [cast(MatchSummary, json.loads(r[0])) for r in rows]

    def group_members(self, group: str) -> list[MatchSummary]:
        """Summaries of the stored matches created with ``deal_group`` ``group``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT summary FROM matches WHERE json_extract(summary, '$.deal_group') = ?",
                (group,),
            ).fetchall()
        return [cast(MatchSummary, json.loads(r[0])) for r in rows]

    def save_room(self, summary: RoomSummary) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO rooms (room_id, created, summary) VALUES (?, ?, ?) "
                "ON CONFLICT (room_id) DO UPDATE SET summary = excluded.summary",
                (summary["room_id"], summary["create_time"], json.dumps(summary)),
            )
