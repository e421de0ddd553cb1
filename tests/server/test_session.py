"""The session: a move is acknowledged before it is delivered, yet nobody sees it half
done; its record reads back exactly."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from cirulla.rules import Options
from cirulla.rules.events import CardPlayed
from cirulla.server.connections import Connection
from cirulla.server.decisions import ByIndex
from cirulla.server.documents import record_events
from cirulla.server.match_config import MatchConfig
from cirulla.server.messages import AcceptedMsg, DecisionMsg, EventMsg, ViewMsg
from cirulla.server.session import MatchSession


def drain(conn: Connection) -> list[Any]:
    out = []
    while not conn.queue.empty():
        out.append(conn.queue.get_nowait())
    return out


def started() -> tuple[MatchSession, list[Connection], int, DecisionMsg]:
    session = MatchSession("m-test", MatchConfig(options=Options.preset("standard"), seed=3))
    conns = [Connection(), Connection()]
    for seat, conn in enumerate(conns):
        session.attach(seat, conn, name=f"p{seat}", version="t")
    opening = [drain(conn) for conn in conns]
    movers = [
        (seat, m) for seat, got in enumerate(opening) for m in got if isinstance(m, DecisionMsg)
    ]
    assert len(movers) == 1
    return session, conns, movers[0][0], movers[0][1]


def test_the_mover_is_acknowledged_first_and_the_move_follows_on_the_next_loop_step() -> None:
    async def main() -> None:
        session, conns, mover, decision = started()
        other = conns[1 - mover]
        session.submit(conns[mover], decision.decision_id, ByIndex(0))
        assert [type(m) for m in drain(conns[mover])] == [AcceptedMsg]
        assert drain(other) == []
        await asyncio.sleep(0)  # one loop step: the move is delivered without any caller
        mine = drain(conns[mover])
        theirs = drain(other)
        played = [m for m in theirs if isinstance(m, EventMsg)]
        assert isinstance(played[0].event, CardPlayed) and played[0].event.seat == mover
        assert next(m.sequence for m in mine if isinstance(m, EventMsg)) == played[0].sequence
        assert isinstance(theirs[-1], DecisionMsg) and session.decision is not None
        assert session.decision.seat == 1 - mover

    asyncio.run(main())


def test_any_entry_point_settles_a_pending_move_first() -> None:
    async def main() -> None:
        session, conns, mover, decision = started()
        session.submit(conns[mover], decision.decision_id, ByIndex(0))
        # A spectator joining before the loop turns sees the move and a consistent view.
        spectator = Connection(None)
        session.add_spectator(spectator)
        got = drain(spectator)
        events = [m for m in got if isinstance(m, EventMsg)]
        view = next(m for m in got if isinstance(m, ViewMsg))
        assert any(isinstance(m.event, CardPlayed) for m in events)
        assert view.sequence == events[-1].sequence == session.sequence
        assert view.view.to_move == 1 - mover
        # The other seat already holds its decision: a resubmit by the mover is refused
        # as out of turn, not as "no decision open".
        session.submit(conns[mover], decision.decision_id + 1, ByIndex(0))
        rejected = drain(conns[mover])[-1]
        assert rejected.reason == "not_your_turn"
        assert f"seat {1 - mover}'s turn" in rejected.message

    asyncio.run(main())


def test_record_events_read_back_exactly_as_published() -> None:
    """Every kind of event survives the JSON record (GetRecord encodes what it reads)."""

    async def main() -> None:
        kinds: set[str] = set()
        for seed in (0, 1, 7, 39):  # 7: a dealer bonus, 39: a redeal
            config = MatchConfig(
                options=Options.preset("standard", players=2, target=31), seed=seed, best_of=2
            )
            session = MatchSession(f"m-{seed}", config)
            conns = [Connection(), Connection()]
            for seat, conn in enumerate(conns):
                session.attach(seat, conn, name=f"p{seat}", version="t")
            rng = random.Random(seed)
            steps = 0
            while session.settled_status() == "in_progress":
                decision = session.decision
                assert decision is not None
                if steps == 3:  # a drop and a resume: server events in the record
                    session.detach(conns[decision.seat])
                    conns[decision.seat] = Connection()
                    session.attach(decision.seat, conns[decision.seat], name="", version="")
                declaring = [i for i, c in enumerate(decision.codes) if c >> 6 & 63]
                pick = rng.choice(declaring or range(len(decision.codes)))
                session.submit(conns[decision.seat], decision.id, ByIndex(pick))
                steps += 1
            for run in session.runs:
                published = list(run.events)
                stored = json.loads(json.dumps(session.record(run)))  # as the store keeps it
                assert record_events(stored) == published
                kinds |= {type(m.event).__name__ for m in published}
        assert {"HandDealt", "CardPlayed", "Declared", "DealScored", "GameEnded"} <= kinds
        assert {"Disconnected", "Reconnected", "LastTake", "RoundDealt"} <= kinds
        assert {"Redeal", "DealerBonus", "DealStarted"} <= kinds

    asyncio.run(main())
