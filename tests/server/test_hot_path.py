"""The shortcuts of a move's hot path do what the long way does.

A bot's SubmitAction by index, read without protobuf (``service._play_request``, and the
Play stream's deserializer, one native call), is what protobuf reads, and every other
frame is left to protobuf.

A message a stream with held events must read at once (``Connection.send``: the held
events and it reach the queue in one step) leaves the stream as releasing the held ones,
then sending it, would; a move's events known to be seen by everyone
(``Delivery.events(everyone=True)``) reach every stream as the filtered way sends them.

``Connection.send_events`` (a move's events handed to a stream at once) leaves the stream
as ``send`` of each would: the same queue, held messages, overflow; ``Turns.clock_state``
without a time limit reads what the seat's clock would say.
"""

from __future__ import annotations

import itertools
import random

import pytest

from cirulla.rules.events import CardPlayed, HandDealt, RoundDealt
from cirulla.server import service
from cirulla.server.clock import TimeControl
from cirulla.server.connections import Connection, Delivery, Seat
from cirulla.server.convert import framing
from cirulla.server.decisions import Turns
from cirulla.server.limits import MAX_BATCH
from cirulla.server.messages import AcceptedMsg, ClockState, DecisionMsg, EventMsg
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import play_pb2


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


def _submit(decision_id: int, **choice: object) -> bytes:
    action = play_pb2.SubmitAction(decision_id=decision_id, **choice)  # type: ignore[arg-type]
    return ms.PlayRequest(submit_action=action).SerializeToString()


def test_a_submission_by_index_is_read_as_protobuf_reads_it() -> None:
    if framing.native is None:
        pytest.skip("the native writer is not built (no C compiler at install)")
    rng = random.Random(7)
    values = [0, 1, 127, 128, 16383, 16384, 2**32 - 1]
    ids = values + [2**35, 2**64 - 1] + [rng.getrandbits(rng.randrange(1, 64)) for _ in range(200)]
    for decision_id in ids:
        for index in values + [rng.randrange(40) for _ in range(3)]:
            data = _submit(decision_id, legal_action_index=index)
            assert framing.submit_index(data) == (decision_id, index)
            assert service._play_request(data) == (decision_id, index)
            assert service._play_deserializer(data) == (decision_id, index)
            parsed = ms.PlayRequest.FromString(data).submit_action
            assert (parsed.decision_id, parsed.legal_action_index) == (decision_id, index)
    # the fields in the other order, as protobuf would read them too
    reordered = bytes([2 << 3 | 2, 4, 2 << 3, 3, 1 << 3, 9])
    parsed = ms.PlayRequest.FromString(reordered).submit_action
    read = (parsed.decision_id, parsed.legal_action_index)
    assert framing.submit_index(reordered) == (9, 3) == read


def test_every_other_frame_is_left_to_protobuf() -> None:
    others = [
        _submit(5, notation="5H"),
        _submit(5),  # no choice: Unreadable, protobuf's
        ms.PlayRequest(list_commands=play_pb2.ListCommands()).SerializeToString(),
        ms.PlayRequest().SerializeToString(),
        _submit(5, legal_action_index=1) + _submit(6, legal_action_index=2),  # merged
        bytes([2 << 3 | 2, 4, 2 << 3, 3, 2 << 3, 4]),  # an index twice (the last wins)
        _submit(5, legal_action_index=1)[:-1],  # cut short
        b"\xff\xff",
    ]
    for data in others:
        assert framing.submit_index(data) is None
        assert not isinstance(service._play_request(data), tuple)
        assert service._play_deserializer(data) == service._play_request(data)


def test_a_message_after_held_events_leaves_a_stream_as_the_long_way() -> None:
    decision = DecisionMsg(9, None, (1, 2), ClockState(None, None), 0, b"framed")
    for limit, queued, held in itertools.product((0, 1, 2, 3, 5, 8), (0, 1, 2, 4), (0, 1, 3)):
        streams = []
        for _ in range(2):
            conn = Connection(0, limit=limit)
            conn.on_overflow = lambda c: None
            for i in range(queued):
                conn.send(EventMsg(i, 1, 1, RoundDealt(1, (3, 3), 30)))  # not deferred yet
            conn.defer = True
            for i in range(held):
                conn.send(AcceptedMsg(i, 0, 0))
            streams.append(conn)
        one_step, long_way = streams
        one_step.send(decision)
        _send_the_long_way(long_way, decision)
        assert _state(one_step) == _state(long_way), (limit, queued, held)


def _send_the_long_way(conn: Connection, msg: DecisionMsg) -> None:
    """``Connection.send`` of a message not deferred, as it was before the shortcut."""
    if conn.closed:
        return
    if conn.defer:
        conn._release()
    if conn.limit and conn.queue.qsize() >= conn.limit:
        conn._overflow()
        return
    conn.queue.put_nowait(msg)


def test_events_seen_by_everyone_reach_every_stream_as_filtered() -> None:
    public = [
        EventMsg(1, 1, 1, CardPlayed(0, 0, 3, 3, 0, False, False)),
        EventMsg(2, 1, 1, RoundDealt(2, (3, 3), 24)),
    ]
    private = EventMsg(3, 1, 1, HandDealt(1, 2, 0b111))
    assert not private.event.visible_to(0) and private.event.visible_to(1)
    deliveries = []
    for everyone in (False, True):
        seats = [Seat(conn=Connection(seat)) for seat in range(3)]
        delivery = Delivery(seats)
        spectator = Connection(None)
        delivery.spectators.add(spectator)
        delivery.events(public, exclude=seats[2].conn, everyone=everyone)
        if not everyone:  # the filtered way still hides a private event
            delivery.events([private])
        deliveries.append([_state(c) for c in [s.conn for s in seats] + [spectator]])
    filtered, at_once = deliveries
    assert [state[0][:2] for state in filtered] == [state[0] for state in at_once]
    assert [state[0][2:] for state in filtered] == [[], [private], [], []]
