"""The shortcuts of a move's hot path do what the long way does.

``Connection.send_events`` (a move's events handed to a stream at once) leaves the stream
as ``send`` of each would: the same queue, held messages, overflow; ``Turns.clock_state``
without a time limit reads what the seat's clock would say.
"""

from __future__ import annotations

import itertools

from cirulla.rules.events import RoundDealt
from cirulla.server.clock import TimeControl
from cirulla.server.connections import Connection
from cirulla.server.decisions import Turns
from cirulla.server.limits import MAX_BATCH
from cirulla.server.messages import AcceptedMsg, ClockState, EventMsg


def _state(conn: Connection) -> tuple[object, ...]:
    queued = []
    while not conn.queue.empty():
        queued.append(conn.queue.get_nowait())
    return (queued, list(conn.held), conn.closed, conn.overflowed)


def test_send_events_leaves_a_stream_as_send_of_each_would() -> None:
    events = [EventMsg(i, 1, 1, RoundDealt(1, (3, 3), 30)) for i in range(MAX_BATCH + 3)]
    for defer, limit, before, count in itertools.product(
        (False, True), (0, 3, MAX_BATCH + 5), (0, 1, MAX_BATCH - 2), (1, 2, MAX_BATCH + 3)
    ):
        streams = []
        for _ in range(2):
            conn = Connection(0, limit=limit)
            conn.defer = defer
            conn.on_overflow = lambda c: None
            for i in range(before):
                conn.send(AcceptedMsg(i, 0, 0))
            streams.append(conn)
        one_by_one, at_once = streams
        for msg in events[:count]:
            one_by_one.send(msg)
        at_once.send_events(events[:count])
        case = (defer, limit, before, count)
        assert _state(one_by_one) == _state(at_once), case


def test_a_clock_without_limits_reads_as_the_seats_clock() -> None:
    for control in (TimeControl(), TimeControl(increment_ms=100, margin_ms=50)):
        turns = Turns(control, 2, lambda decision_id: None)
        assert turns.unlimited
        turns.open(1, [1, 2])
        clock = turns.clocks[1]
        assert turns.clock_state(1) == ClockState(*clock.left(), clock.increment_ms())
    limited = Turns(TimeControl(move_limit_ms=500), 2, lambda decision_id: None)
    assert not limited.unlimited
    limited.clocks[0].start()
    assert limited.clock_state(0).move_left_ms is not None
