"""Complete matches over a real in-process gRPC server; records; replay; health; admin."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cirulla.server.client import play_seat, random_choice
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, rules_pb2
from tests.server_harness import server_command, serving

CIRULLA = [sys.executable, "-m", "cirulla"]


def settings(players: int = 2, target: int = 11, **kw: object) -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=players, target=target)),
        **kw,
    )


async def play_match(stub, request_settings, seed: int = 0):
    resp = await stub.CreateMatch(ms.CreateMatchRequest(settings=request_settings))
    logs = await asyncio.gather(
        *[
            play_seat(
                stub,
                resp.match.match_id,
                t.token,
                random_choice(random.Random(seed + i)),
                name=f"r{i}",
            )
            for i, t in enumerate(resp.seat_tokens)
        ]
    )
    return resp, logs


@pytest.mark.parametrize("players", [2, 3, 4])
def test_complete_match_and_record_replays(players: int) -> None:
    async def main() -> None:
        async with serving(":memory:") as (stub, srv, _ch):
            resp, logs = await play_match(stub, settings(players, best_of=3, seed=5), players)
            assert len(resp.seat_tokens) == players
            assert len({t.token for t in resp.seat_tokens}) == players
            for log in logs:
                kinds = [m.WhichOneof("body") for m in log]
                assert kinds[0] == "welcome" and kinds[-1] == "goodbye"
                assert kinds[-2] == "match_result"
                assert "decision_request" in kinds and "action_accepted" in kinds
                assert not any(k == "action_rejected" for k in kinds)
            result = logs[0][-2].match_result
            assert max(result.games_won) == 2 or sum(result.games_won) == 3
            got = await stub.GetMatch(ms.GetMatchRequest(match_id=resp.match.match_id))
            match = got.match
            assert match.status == 3  # FINISHED
            assert list(match.result.games_won) == list(result.games_won)
            assert len(match.games) == sum(result.games_won)
            assert [s.name for s in match.seats] == [f"r{i}" for i in range(players)]
            assert not match.settings.HasField("seed")
            records = await stub.ListRecords(ms.ListRecordsRequest(match_id=match.match_id))
            assert len(records.records) == len(match.games)
            from cirulla.server.replay import replay

            for summary in records.records:
                full = await stub.GetRecord(ms.GetRecordRequest(record_id=summary.record_id))
                assert full.record.deals and full.record.deals[0].decks
                report = replay(srv.hub.store.get_record(summary.record_id))
                assert report.ok, report.mismatches
                assert report.deals_checked == len(full.record.deals)
                # Record.events: exactly what the seats together received in that
                # game, hands included, in sequence order.
                game = full.record.game_number
                seen = {
                    m.event.sequence: m.event
                    for log in logs
                    for m in log
                    if m.WhichOneof("body") == "event" and m.event.game_number == game
                }
                events = list(full.record.events)
                assert [e.sequence for e in events] == sorted(seen)
                assert events == [seen[e.sequence] for e in events]
                first = events[0].sequence
                assert [e.sequence for e in events] == list(range(first, first + len(events)))
                hands = [e for e in events if e.WhichOneof("body") == "hand_dealt"]
                assert {e.private_to_seat for e in hands} == set(range(players))
                assert all(e.hand_dealt.seat == e.private_to_seat for e in hands)
                assert events[-1].game_over == full.record.result

    asyncio.run(main())


def test_replay_cli_on_a_real_record(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite3"

    async def main() -> str:
        async with serving(db) as (stub, _srv, _ch):
            resp, _ = await play_match(stub, settings(2, target=21, seed=11))
            recs = await stub.ListRecords(ms.ListRecordsRequest(match_id=resp.match.match_id))
            return recs.records[0].record_id

    record_id = asyncio.run(main())
    ok = subprocess.run(
        [*CIRULLA, "replay", record_id, "--db", str(db)], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "OK" in ok.stdout
    out = tmp_path / "rec.json"
    exp = subprocess.run(
        [*CIRULLA, "replay", "--export", record_id, "--db", str(db), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert exp.returncode == 0, exp.stderr
    assert subprocess.run([*CIRULLA, "replay", str(out)], capture_output=True).returncode == 0
    record = json.loads(out.read_text())
    record["deals"][0]["result"]["scores"][0]["cards"] ^= 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    res = subprocess.run([*CIRULLA, "replay", str(bad)], capture_output=True, text=True)
    assert res.returncode == 1
    assert "mismatch" in res.stdout


def test_health_and_admin_token() -> None:
    async def main() -> None:
        async with serving(":memory:", admin_token="s3cret") as (stub, _srv, ch):
            health = health_pb2_grpc.HealthStub(ch)
            for service in ("", "cirulla.v1.MatchService"):
                reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            stub = match_service_pb2_grpc.MatchServiceStub(ch)
            req = ms.CreateMatchRequest(settings=settings())
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await stub.CreateMatch(req)
            assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "authorization" in exc.value.details()
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await stub.CreateMatch(req, metadata=[("authorization", "Bearer nope")])
            assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await stub.CreateRoom(ms.CreateRoomRequest(settings=settings()))
            assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
            ok = await stub.CreateMatch(req, metadata=[("authorization", "Bearer s3cret")])
            assert ok.match.match_id and len(ok.seat_tokens) == 2

    asyncio.run(main())


def test_room_plays_games_one_after_another() -> None:
    async def main() -> None:
        async with serving(":memory:") as (stub, _srv, _ch):
            room = await stub.CreateRoom(
                ms.CreateRoomRequest(display_name="club", settings=settings(2, target=11))
            )
            rid = room.room.room_id
            await asyncio.gather(
                *[
                    play_seat(
                        stub,
                        "",
                        t.token,
                        random_choice(random.Random(i)),
                        room_id=rid,
                        max_games=3,
                    )
                    for i, t in enumerate(room.seat_tokens)
                ]
            )
            got = (await stub.GetRoom(ms.GetRoomRequest(room_id=rid))).room
            assert len(got.history) >= 3
            assert len({h.match_id for h in got.history}) == len(got.history)
            assert all(h.result.HasField("winner_side") for h in got.history)
            listed = await stub.ListRooms(ms.ListRoomsRequest())
            assert [r.room_id for r in listed.rooms] == [rid]

    asyncio.run(main())


def test_server_subprocess_port_file_and_graceful_shutdown(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        server_command(
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(port_file),
            "--db",
            str(tmp_path / "s.sqlite3"),
        ),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(200):
            if port_file.exists():
                break
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read() if proc.stderr else "server died")
            import time

            time.sleep(0.05)
        port = int(port_file.read_text())

        async def main() -> str:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                stub = match_service_pb2_grpc.MatchServiceStub(ch)
                resp = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
                from cirulla.server.client import ManualSeat, hello

                seat = ManualSeat(stub)
                seat.send(hello(resp.match.match_id, resp.seat_tokens[0].token))
                await seat.next("welcome")
                proc.send_signal(2)  # SIGINT
                bye = await seat.next("goodbye")
                return str(bye.goodbye.reason)

        reason = asyncio.run(main())
        assert reason == "3"  # GOODBYE_REASON_SERVER_SHUTDOWN
        assert proc.wait(10) == 0
        assert "server_started" in (proc.stderr.read() if proc.stderr else "")
    finally:
        if proc.poll() is None:
            proc.kill()
