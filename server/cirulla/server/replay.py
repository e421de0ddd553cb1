"""Re-run a stored game record through the rules core and check it.

A record is only worth keeping if it reproduces the game: the decks it lists, fed to a
fresh ``Game`` with the same options and first dealer, with the recorded actions applied
through the checked path, must give every recorded deal score and the recorded result.
Anything else means the server (or the file) is wrong, so ``cirulla replay`` exits 1.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from cirulla.rules import CirullaError, Game, Options
from cirulla.rules.events import (
    DealScored,
    GameOver,
)
from cirulla.server import records
from cirulla.server.convert.records import record_pb
from cirulla.server.documents import RECORD_FORMAT, GameRecord
from cirulla.server.store import Store
from cirulla.v1 import match_pb2


@dataclass
class ReplayReport:
    record_id: str
    actions: int = 0
    deals_checked: int = 0
    winner: int | None = None
    totals: tuple[int, ...] = ()
    reason: str = ""
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def summary(self) -> str:
        verdict = "OK" if self.ok else f"MISMATCH ({len(self.mismatches)})"
        return (
            f"record {self.record_id}: {verdict}; {self.actions} actions, "
            f"{self.deals_checked} deal scores checked, result {self.reason} "
            f"winner side {self.winner} totals {list(self.totals)}"
        )


def load_record(source: str, db: str | None = None) -> Mapping[str, object]:
    """A record from a JSON file path, or by id from the database ``db``: a document to
    check, not trust (``public_records``, ``replay_document`` and ``replay`` check every
    field they read), so it stays a plain mapping."""
    path = Path(source)
    if path.suffix in (".json", ".gz") or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"no record file {source}")
        try:
            doc = json.loads(read_record_file(path))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{source}: not a JSON record file ({exc})") from None
        if not records.is_public_document(doc) and not (
            isinstance(doc, dict) and doc.get("format") == RECORD_FORMAT
        ):
            # JSON, but no record: one line, not a mismatch (or a traceback for a list)
            raise ValueError(
                f"{source}: not a record file: JSON, but neither the protocol's Record "
                "(a tournament's records/*.json, replay --export) nor a "
                f"{RECORD_FORMAT} document"
            )
        return cast(Mapping[str, object], doc)
    if db is None or not Path(db).exists():
        raise FileNotFoundError(f"{source!r} is not a file and database {db!r} does not exist")
    store = Store(db)
    record = store.get_record(source)
    if record is None:
        pruned = store.pruned(source)
        raise LookupError(
            f"record {source!r}: {pruned}" if pruned else f"no record {source!r} in {db}"
        )
    return record


def read_record_file(path: Path) -> str:
    """A record file's text: plain JSON, or gzip'd (a ladder's ``records/*.json.gz``:
    recognised by gzip's magic bytes, whatever the name)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{path}: not a whole gzip file ({exc})") from None
    return data.decode("utf-8")


def public_records(doc: Mapping[str, object]) -> list[match_pb2.Record]:
    """The ``cirulla.v1.Record`` messages of a loaded record (file or database)."""
    if records.is_public_document(doc):
        return records.records_from_document(doc)
    if doc.get("format") == RECORD_FORMAT:
        return [record_pb(cast(GameRecord, doc))]  # the server's own format
    raise ValueError(f"unknown record format {doc.get('format')!r}")


def replay_document(doc: Mapping[str, object]) -> list[ReplayReport]:
    """Replay every game of a record file (public format) or a database record."""
    if not records.is_public_document(doc):
        return [replay(doc)]
    reports = []
    for rec in records.records_from_document(doc):
        try:
            reports.append(replay(records.replay_input(rec)))
        except ValueError as exc:
            report = ReplayReport(record_id=rec.record_id or "?")
            report.mismatches.append(f"malformed record: {exc}")
            reports.append(report)
    return reports


def replay(record: Mapping[str, Any]) -> ReplayReport:
    """Check a record (``cirulla-record/1``: the database's, or ``records.replay_input``
    of a file's): a JSON document read as it is, every field checked where it is used."""
    report = ReplayReport(record_id=str(record.get("record_id", "?")))
    if record.get("format") != RECORD_FORMAT:
        report.mismatches.append(f"unknown record format {record.get('format')!r}")
        return report
    try:
        options = Options(**record["options"])
        game = Game(options, decks=record["decks"], first_dealer=record["first_dealer"])
    except (CirullaError, KeyError, TypeError) as exc:
        report.mismatches.append(f"cannot set up the game: {exc}")
        return report
    deals = record.get("deals", [])
    scored: list[DealScored] = []
    for n, act in enumerate(record.get("actions", []), 1):
        if game.to_move != act["seat"]:
            report.mismatches.append(
                f"action {n}: recorded seat {act['seat']} but seat {game.to_move} is to move"
            )
            return report
        try:
            events = game.apply(int(act["code"]), act["seat"])
        except CirullaError as exc:
            report.mismatches.append(f"action {n} ({act.get('notation')}): {exc}")
            return report
        report.actions = n
        scored.extend(e for e in events if isinstance(e, DealScored))
        for e in events:
            if isinstance(e, GameOver):
                report.winner = e.winner
    for k, event in enumerate(scored):
        if k >= len(deals):
            report.mismatches.append(f"deal {event.deal} was scored but is not in the record")
            continue
        want = deals[k]
        got_score = event.score.to_dict()
        if want.get("score") != got_score:
            report.mismatches.append(
                f"deal {event.deal}: recorded score {want.get('score')} "
                f"but replay gives {got_score}"
            )
        if list(want.get("totals", [])) != list(event.totals):
            report.mismatches.append(
                f"deal {event.deal}: recorded totals {want.get('totals')} "
                f"but replay gives {list(event.totals)}"
            )
        report.deals_checked += 1
    if len(deals) > len(scored):
        report.mismatches.append(
            f"the record lists {len(deals)} scored deals but replay scored {len(scored)}"
        )
    result = record.get("result", {})
    report.reason = result.get("reason", "")
    report.totals = tuple(game.totals)
    if report.reason in ("target", "cappotto"):
        if game.winner is None:
            report.mismatches.append("the record says the game ended but replay did not end it")
        elif game.winner != result.get("winner"):
            report.mismatches.append(
                f"recorded winner side {result.get('winner')} but replay gives {game.winner}"
            )
        if list(result.get("totals", [])) != list(game.totals):
            report.mismatches.append(
                f"recorded totals {result.get('totals')} but replay gives {list(game.totals)}"
            )
        if bool(result.get("cappotto")) != game.cappotto:
            report.mismatches.append("cappotto flag differs from the replay")
    else:
        # Forfeit or abort: the rules did not end the game; the server did.
        if game.winner is not None:
            report.mismatches.append(
                f"record says {report.reason!r} but the rules already ended the game"
            )
        report.winner = result.get("winner")
    return report
