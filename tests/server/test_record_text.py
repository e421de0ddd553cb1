"""A finished game's record written as JSON text (``recordkeeping.record_text``: its
actions and events by the native writer ``convert/_recordjson.c`` when it is built,
never built as dicts) is the very text the store wrote from the record's dict
(``game_record`` through ``json.dumps``), so every reader reads the same record.

Whole matches of 2, 3 and 4 players through the session (declarations, a drop and a
resume, redeals, dealer bonuses, last takes, every kind of event), with the native writer
and the Python one; entries the native writer leaves to Python (an escape, a large
number, an extra field named as one of the entry's own, an unknown type) come out the
same; and the store keeps the text and reads it back as the record.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random

import pytest

from cirulla.rules import Options
from cirulla.rules.events import CardPlayed, HandDealt, LastTake
from cirulla.server import recordkeeping
from cirulla.server.connections import Connection
from cirulla.server.decisions import ByIndex
from cirulla.server.documents import event_entry
from cirulla.server.match_config import MatchConfig
from cirulla.server.messages import EventMsg
from cirulla.server.recordkeeping import GameRun, record_text
from cirulla.server.session import MatchSession
from cirulla.server.store import Store

needs_native = pytest.mark.skipif(
    recordkeeping._native is None, reason="the native record writer is not built"
)


def _dumps(value: object) -> str:
    """The store's JSON of a record (``Store.save_record``)."""
    return json.dumps(value, separators=(",", ":"), check_circular=False)


def _played(players: int, seed: int) -> MatchSession:
    """A finished match of random moves, declarations preferred, one seat dropped and
    back (server events in the record), names that JSON escapes."""

    async def main() -> MatchSession:
        options = Options.preset("standard", players=players, target=31)
        session = MatchSession(f"m-{seed}", MatchConfig(options=options, seed=seed, best_of=2))
        conns = [Connection() for _ in range(players)]
        for seat, conn in enumerate(conns):
            session.attach(seat, conn, name=f'p{seat} "é\\', version="t\n")
        rng = random.Random(seed)
        steps = 0
        while session.settled_status() == "in_progress":
            decision = session.decision
            assert decision is not None
            if steps == 3:
                session.detach(conns[decision.seat])
                conns[decision.seat] = Connection()
                session.attach(decision.seat, conns[decision.seat], name="", version="")
            declaring = [i for i, c in enumerate(decision.codes) if c >> 6 & 63]
            pick = rng.choice(declaring or range(len(decision.codes)))
            session.submit(conns[decision.seat], decision.id, ByIndex(pick))
            steps += 1
        return session

    return asyncio.run(main())


def _texts(session: MatchSession, run: GameRun) -> tuple[str, str, str]:
    """The store's text of the record's dict, the native writer's, the Python one's."""
    seats, finish = session.seat_public(), "2026-12-07T00:00:00.000+00:00"
    reference = _dumps(session.record(run, seats=seats, finish=finish))
    fields = session.record_fields(seats, finish)
    shell, native = record_text(run, **fields)
    _, python = record_text(run, python=True, **fields)
    assert shell["actions"] == [] and shell["events"] == []
    assert json.loads(reference) == {**shell, **json.loads(native)}
    return reference, native, python


@pytest.mark.parametrize(("players", "seed"), [(2, 0), (2, 7), (2, 39), (3, 1), (4, 2)])
def test_the_record_text_is_the_stores_json_of_the_record(players: int, seed: int) -> None:
    """Byte for byte, over every game of whole matches (seed 7: a dealer bonus, 39: a
    redeal), written natively and in Python."""
    session = _played(players, seed)
    kinds: set[str] = set()
    for run in session.runs:
        reference, native, python = _texts(session, run)
        assert native == reference
        assert python == reference
        kinds |= {type(m.event).__name__ for m in run.events}
    assert {"HandDealt", "CardPlayed", "RoundDealt", "DealStarted", "LastTake"} <= kinds
    assert {"DealScored", "GameEnded", "Disconnected", "Reconnected"} <= kinds


@needs_native
def test_entries_the_native_writer_cannot_write_are_pythons() -> None:
    """An escaped string, a number past 64 bits, a float, an extra field named as one of
    the entry's own (it takes that key's place), a non-str key, a subclass of int, an
    event type it does not know: each entry is json.dumps' own, the others around it
    still written natively."""
    native = recordkeeping._native
    assert native is not None

    class Unknown(CardPlayed):
        __slots__ = ()

    class Count(int):
        pass

    played = CardPlayed(0, 0, 5, 2, 1 << 9, False, False)
    extras_cases: list[dict[str, object]] = [
        {"by_timeout": False, "notation": "2D:3D"},
        {"by_timeout": False, "notation": 'é"\\'},
        {"by_timeout": 1 << 70, "notation": "x"},
        {"by_timeout": 0.5, "notation": "x"},
        {"type": "Other"},
        {"seat": 3},
        {"deal": 9},
        {7: "seven"},
        {"by_timeout": Count(3)},
        {"nested": [[1, 2], [3, None, True]], "empty": []},
    ]
    msgs = [EventMsg(n, 1, 2, played, None, extras) for n, extras in enumerate(extras_cases)]  # type: ignore[arg-type]
    msgs += [
        EventMsg(20, 1, 2, HandDealt(1, 2, (1 << 40) - 1), 1),
        EventMsg(21, 1, 2, HandDealt(1, 2, 1 << 40), 1),
        EventMsg(22, 1, 2, HandDealt(1, 2, 1 << 64), 1),
        EventMsg(23, 1, -(1 << 62), LastTake(None, 0), None),
        EventMsg(24, 1, 2, Unknown(1, 1, 39, 10, 0, True, True), None),
        EventMsg(25, 1, 2, CardPlayed(1, 1, 40, 10, 0, True, True), None),
    ]
    used: list[int] = []

    def fallback(msg: EventMsg) -> str:
        used.append(msg.sequence)
        try:
            return _dumps(event_entry(msg))
        except IndexError:  # a card past 40 has no name: json.dumps would not get this far
            return '"no such card"'

    got = native.events(msgs, fallback)
    expected = [
        _dumps(event_entry(m)) if m.sequence not in (21, 22, 25) else '"no such card"' for m in msgs
    ]
    assert got == "[" + ",".join(expected) + "]"
    assert used == [1, 2, 3, 4, 5, 6, 7, 8, 21, 22, 24, 25]
    actions: list[object] = [{"a": 1, "b": "x"}, {"a": "é"}, {1: 2}, ["not", "a", "dict"]]
    assert native.flat(actions, _dumps) == _dumps(actions)


def test_the_store_keeps_the_text_and_reads_it_back_as_the_record(tmp_path: object) -> None:
    session = _played(2, 3)
    run = session.runs[0]
    shell, text = record_text(run, **session.record_fields(finish="2026-12-07"))
    store = Store(":memory:")
    store.save_record_text(shell, text)
    row = store._db.execute("SELECT record, match_id, game_number FROM records").fetchone()
    assert gzip.decompress(row[0]).decode() == text  # a plain gzip file of the same JSON
    assert (row[1], row[2]) == (session.match_id, 1)
    listed = store.list_records(match_id=session.match_id)
    assert listed == [json.loads(text)]
    assert store.get_record(shell["record_id"]) is listed[0]  # decoded once, then shared
    store._recent.clear()
    assert store.get_record(shell["record_id"]) == json.loads(text)


def test_the_loads_cpu_reading_waits_for_work_left_queued(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``load.settled_cpu`` (what ``cirulla bench server`` reads of the server after a
    load): CPU still being spent when it is called (the records of the last games being
    written) is counted; it stops at the first quiet interval, or at its limit."""
    from cirulla.server import load

    readings = iter([1.0, 1.5, 2.25, 2.25, 9.0])
    monkeypatch.setattr(load, "cpu_seconds", lambda pid: next(readings))
    monkeypatch.setattr(load.time, "sleep", lambda s: None)
    assert load.settled_cpu(1) == 2.25
    busy = iter(float(n) for n in range(1000))
    monkeypatch.setattr(load, "cpu_seconds", lambda pid: next(busy))
    assert load.settled_cpu(1, limit_s=0.0) == 0.0
