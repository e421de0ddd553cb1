"""Connect-in bots: a kit bot enrolls with its key, receives the seats of its running
matches from the database (whichever process hosts them), plays them on the match server
named in the assignment, and is refused with a wrong key. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlalchemy import select

from cirulla.bots.enroll import LadderBot, read_bot_key
from cirulla.bots.kit import BotError
from cirulla.bots.simple import RandomPolicy
from cirulla.clients.matches.journal import Settings
from cirulla.clients.matches.referee import match_settings
from cirulla.ladder.db import open_database
from cirulla.ladder.enroll import Enrollments
from cirulla.ladder.schema import enrollments, ladder_seats
from cirulla.ladder.service import LadderService
from cirulla.ladder.store import (
    LadderStore,
    MatchConfig,
    MatchPlan,
    SeatPlan,
)
from cirulla.server.app import start_server
from cirulla.server.client import play_seat, random_choice
from cirulla.v1 import ladder_pb2_grpc, match_service_pb2, match_service_pb2_grpc


def schedule_running(store: LadderStore, stub: Any, versions: tuple[int, int], address: str) -> str:
    """A 2-player ladder match created on the match server at ``address`` and running."""
    (match_id,) = store.schedule(
        [
            MatchPlan(
                "2p",
                (SeatPlan(0, 0, versions[0]), SeatPlan(1, 1, versions[1])),
                seed=11,
                config=MatchConfig(),
            )
        ]
    )
    claimed = store.claim("w-test", address)
    assert claimed is not None and claimed.id == match_id
    created = stub.CreateMatch(
        match_service_pb2.CreateMatchRequest(
            settings=match_settings(Settings(bots={}), claimed.seed)
        )
    )
    tokens = {t.seat: t.token for t in created.seat_tokens}
    assert store.mark_running(match_id, "w-test", created.match.match_id, tokens)
    return match_id


async def start_ladder(store: LadderStore) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server()
    ladder_pb2_grpc.add_LadderServiceServicer_to_server(
        LadderService(store, served_by="test-ladder"), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


async def play_other_seat(store: LadderStore, match_id: str, address: str) -> str:
    """Play seat 1 of a running ladder match at random over gRPC, to its goodbye; the
    match server's id of the match."""
    server_match_id = store.match(match_id)["server_match_id"]
    tokens = await asyncio.to_thread(store.seat_tokens, match_id)
    async with grpc.aio.insecure_channel(address) as channel:
        opponent = await asyncio.wait_for(
            play_seat(
                match_service_pb2_grpc.MatchServiceStub(channel),
                server_match_id,
                tokens[1],
                random_choice(random.Random(2)),
            ),
            timeout=120,
        )
    assert opponent[-1].WhichOneof("body") == "goodbye"
    return server_match_id


def test_connect_in_bot_plays_its_assigned_seat(db_url: str) -> None:
    store = LadderStore(open_database(db_url))
    bot, _, key = store.add_bot("remote", "connect")
    other, _, _ = store.add_bot("local", "random")
    assert key, "a connect-in bot gets a key once"

    async def main() -> None:
        match_server = await start_server("127.0.0.1:0")
        ladder, ladder_port = await start_ladder(store)
        address = f"127.0.0.1:{match_server.port}"
        kit_bot = LadderBot(
            lambda: RandomPolicy(seed=1),
            ladder=f"127.0.0.1:{ladder_port}",
            bot_name="remote",
            bot_key=key,
            capacity=2,
        )
        stop = threading.Event()
        runner = asyncio.create_task(asyncio.to_thread(kit_bot.run, stop))
        try:
            for _ in range(100):  # enrolled: the row is there
                await asyncio.sleep(0.1)
                with store.engine.connect() as conn:
                    rows = conn.execute(select(enrollments.c.capacity)).scalars().all()
                if rows:
                    break
            assert rows == [2]
            with grpc.insecure_channel(address) as channel:
                stub = match_service_pb2_grpc.MatchServiceStub(channel)
                match_id = await asyncio.to_thread(
                    schedule_running,
                    store,
                    stub,
                    (bot["version_id"], other["version_id"]),
                    address,
                )
            await play_other_seat(store, match_id, address)
            assert await asyncio.to_thread(kit_bot.wait_idle, 60)
        finally:
            stop.set()
            await runner
            await ladder.stop(0)
            await match_server.stop()
        (played,) = kit_bot.played
        assert played.match_id == match_id and played.seat == 0 and not played.error
        assert played.outcome is not None and played.outcome.seat == 0
        assert played.outcome.decisions > 0
        with store.engine.connect() as conn:
            delivered = conn.execute(
                select(ladder_seats.c.seat).where(ladder_seats.c.delivered_at.is_not(None))
            ).scalars()
            assert list(delivered) == [0]  # only the connect-in seat, once
            assert conn.execute(select(enrollments)).first() is None  # closed on disconnect

    asyncio.run(main())


def test_wrong_key_is_refused_with_one_line(db_url: str) -> None:
    store = LadderStore(open_database(db_url))
    store.add_bot("remote", "connect")
    store.add_bot("managed", "greedy")

    async def main() -> list[str]:
        ladder, port = await start_ladder(store)
        errors = []
        try:
            for name, key in (("remote", "not-the-key"), ("managed", "x"), ("nobody", "x")):
                kit_bot = LadderBot(
                    RandomPolicy, ladder=f"127.0.0.1:{port}", bot_name=name, bot_key=key
                )
                with pytest.raises(BotError) as caught:
                    await asyncio.to_thread(kit_bot.run, threading.Event())
                errors.append(str(caught.value))
        finally:
            await ladder.stop(0)
        return errors

    errors = asyncio.run(main())
    assert all("unknown connect-in bot or wrong bot key" in e for e in errors), errors
    with store.engine.connect() as conn:
        assert conn.execute(select(enrollments)).first() is None


def test_each_seat_is_delivered_once_and_capacity_bounds_a_delivery(db_url: str) -> None:
    store = LadderStore(open_database(db_url))
    bot, _, _ = store.add_bot("remote", "connect", max_concurrency=3)
    other, _, _ = store.add_bot("local", "random", max_concurrency=3)
    plans = [
        MatchPlan(
            "2p",
            (SeatPlan(0, 0, bot["version_id"]), SeatPlan(1, 1, other["version_id"])),
            seed=i,
            config=MatchConfig(),
        )
        for i in range(3)
    ]
    ids = store.schedule(plans)
    for _ in ids:
        claimed = store.claim("w1", "127.0.0.1:1")
        assert claimed is not None
        assert store.mark_running(claimed.id, "w1", f"srv-{claimed.id}", {0: "t0", 1: "t1"})
    book = Enrollments(store)
    first = book.deliver(bot["id"], 2)
    second = book.deliver(bot["id"], 5)
    third = book.deliver(bot["id"], 5)
    assert len(first) == 2 and len(second) == 1 and third == []
    delivered = {d.match_id for d in first + second}
    assert delivered == set(ids)
    assert all(d.seat == 0 and d.token == "t0" for d in first + second)
    assert all(d.server_address == "127.0.0.1:1" for d in first + second)
    assert book.running(delivered) == delivered


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "CIRULLA_BOT_KEY"}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "cirulla", "bot", "random", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


def test_cli_needs_a_key_from_the_environment_or_a_file(tmp_path: Path) -> None:
    done = run_cli("--ladder", "127.0.0.1:9", "--bot-name", "remote")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "cirulla bot: no bot key: set CIRULLA_BOT_KEY or pass --bot-key-file FILE "
        "(the key `cirulla ladder add NAME connect` printed)"
    ]
    empty = tmp_path / "key"
    empty.write_text("\n")
    done = run_cli("--ladder", "127.0.0.1:9", "--bot-name", "remote", "--bot-key-file", str(empty))
    assert done.returncode == 1 and "the file is empty" in done.stderr
    assert "Traceback" not in done.stderr
    empty.write_text(" sekret \n")
    assert read_bot_key(str(empty)) == "sekret"


def test_cli_with_a_wrong_key_stops_with_one_line(tmp_path: Path) -> None:
    store = LadderStore(open_database(str(tmp_path / "ladder.sqlite3")))
    store.add_bot("remote", "connect")

    async def main() -> subprocess.CompletedProcess[str]:
        ladder, port = await start_ladder(store)
        try:
            return await asyncio.to_thread(
                run_cli,
                "--ladder",
                f"127.0.0.1:{port}",
                "--bot-name",
                "remote",
                env={"CIRULLA_BOT_KEY": "wrong"},
            )
        finally:
            await ladder.stop(0)

    done = asyncio.run(main())
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "cirulla bot: the ladder refused the bot: bot 'remote': unknown connect-in bot or "
        "wrong bot key"
    )
    assert "Traceback" not in done.stderr


DROPPER = Path(__file__).parents[1] / "programs" / "enroll_and_drop.py"


def test_a_seat_whose_bot_dropped_is_redelivered_to_its_next_enrollment(
    db_url: str, tmp_path: Path
) -> None:
    """A real connect-in bot process takes its assignment and dies before joining; the
    seat goes to the bot's next enrollment (a real ``cirulla bot --ladder`` process),
    which plays the match."""
    store = LadderStore(open_database(db_url))
    bot, _, key = store.add_bot("remote", "connect")
    other, _, _ = store.add_bot("local", "random")
    env = {**os.environ, "CIRULLA_BOT_KEY": key}
    kit_log = tmp_path / "kit.log"

    async def main() -> None:
        match_server = await start_server("127.0.0.1:0")
        ladder, ladder_port = await start_ladder(store)
        address = f"127.0.0.1:{match_server.port}"
        ladder_address = f"127.0.0.1:{ladder_port}"
        kit: subprocess.Popen[str] | None = None
        try:
            with grpc.insecure_channel(address) as channel:
                stub = match_service_pb2_grpc.MatchServiceStub(channel)
                match_id = await asyncio.to_thread(
                    schedule_running,
                    store,
                    stub,
                    (bot["version_id"], other["version_id"]),
                    address,
                )
            dropper = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, str(DROPPER), ladder_address, "remote"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert dropper.returncode == 9, dropper.stderr
            assert dropper.stdout.split() == ["assigned", match_id, "0"]

            def delivered_at() -> float | None:
                with store.engine.connect() as conn:
                    return conn.execute(
                        select(ladder_seats.c.delivered_at).where(
                            ladder_seats.c.match_id == match_id, ladder_seats.c.seat == 0
                        )
                    ).scalar_one()

            for _ in range(300):  # the dropped stream is noticed, the seat freed again
                if delivered_at() is None:
                    break
                await asyncio.sleep(0.1)
            assert delivered_at() is None
            kit = subprocess.Popen(
                [
                    *(sys.executable, "-m", "cirulla", "bot", "random"),
                    *("--ladder", ladder_address, "--bot-name", "remote"),
                ],
                env=env,
                stdout=kit_log.open("wb"),
                stderr=subprocess.STDOUT,
            )
            server_match_id = await play_other_seat(store, match_id, address)
            assert delivered_at() is not None  # delivered again, to the new enrollment
            async with grpc.aio.insecure_channel(address) as channel:
                got = await match_service_pb2_grpc.MatchServiceStub(channel).GetMatch(
                    match_service_pb2.GetMatchRequest(match_id=server_match_id)
                )
            match = got.match
            assert match.games and not match.games[-1].HasField("forfeit_seat")
            assert any(s.seat == 0 and s.name for s in match.seats)
            for _ in range(600):  # the kit says so once its Play stream has closed
                if f"match {match_id} over (seat 0)" in kit_log.read_text():
                    break
                await asyncio.sleep(0.1)
            assert f"match {match_id} over (seat 0)" in kit_log.read_text()
        finally:
            if kit is not None:
                kit.terminate()
                await asyncio.to_thread(kit.wait, 60)
            await ladder.stop(0)
            await match_server.stop()

    asyncio.run(main())
