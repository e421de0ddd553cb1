"""The match server's bot socket (``--bot-socket``, ``cirulla.server.bot_socket``): what a
sandboxed bot reaches through its relay. Play plays a whole match there; every other
rpc, of every service, is refused with one line, and GetMatch only answers a seat token
of the match it names. A real server, real gRPC over a real unix socket."""

from __future__ import annotations

import asyncio
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cirulla.bots.kit import BotClient
from cirulla.bots.simple import RandomPolicy
from cirulla.server.app import start_server
from cirulla.server.bot_socket import REFUSED
from cirulla.v1 import (
    ladder_pb2,
    ladder_pb2_grpc,
    match_service_pb2_grpc,
    match_settings_pb2,
    rules_pb2,
)
from cirulla.v1 import match_service_pb2 as ms


@pytest.fixture
def folder() -> Iterator[Path]:
    """A short folder (a unix socket's path is at most 107 bytes; pytest's are long)."""
    path = Path(tempfile.mkdtemp(prefix="cirulla-bs-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def settings() -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11))
    )


async def refused(call: Callable[[], Awaitable[Any]]) -> None:
    with pytest.raises(grpc.RpcError) as info:
        await call()
    error: Any = info.value
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error
    assert error.details() == REFUSED


def test_the_bot_socket_plays_a_match_and_refuses_everything_else(folder: Path) -> None:
    sock = folder / "bot.sock"

    async def main() -> None:
        running = await start_server("127.0.0.1:0", bot_socket=sock)
        try:
            assert stat.S_ISSOCK(sock.stat().st_mode)
            assert stat.S_IMODE(sock.stat().st_mode) == 0o600
            async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as tcp:
                created = await match_service_pb2_grpc.MatchServiceStub(tcp).CreateMatch(
                    ms.CreateMatchRequest(settings=settings())
                )
            match_id = created.match.match_id
            tokens = [t.token for t in created.seat_tokens]
            bot_address = f"unix:{sock}"
            async with grpc.aio.insecure_channel(bot_address) as bots:
                stub = match_service_pb2_grpc.MatchServiceStub(bots)
                # the connect-in stand-in's poll: its own match, with its seat's token
                own = await stub.GetMatch(
                    ms.GetMatchRequest(match_id=match_id),
                    metadata=(("authorization", f"Bearer {tokens[1]}"),),
                )
                assert own.match.match_id == match_id
                clients = [
                    BotClient(RandomPolicy(), server=bot_address, match_id=match_id, token=t)
                    for t in tokens
                ]
                outcomes = await asyncio.wait_for(
                    asyncio.gather(*(c.run_async() for c in clients)), 120
                )
                assert {o.seat for o in outcomes} == {0, 1}
                assert all(o.winner_side is not None for o in outcomes)
                assert all(o.decisions > 0 for o in outcomes)

                mine = (("authorization", f"Bearer {tokens[0]}"),)
                await refused(lambda: stub.ListMatches(ms.ListMatchesRequest()))
                await refused(lambda: stub.ListMatches(ms.ListMatchesRequest(), metadata=mine))
                await refused(lambda: stub.GetMatch(ms.GetMatchRequest(match_id=match_id)))
                await refused(
                    lambda: stub.GetMatch(
                        ms.GetMatchRequest(match_id=match_id),
                        metadata=(("authorization", "Bearer not-a-seat-token"),),
                    )
                )
                await refused(lambda: stub.ListRecords(ms.ListRecordsRequest()))
                await refused(lambda: stub.GetRecord(ms.GetRecordRequest(record_id=match_id)))
                await refused(lambda: stub.CreateMatch(ms.CreateMatchRequest(settings=settings())))
                await refused(lambda: stub.AbortMatch(ms.AbortMatchRequest(match_id=match_id)))
                await refused(lambda: stub.ListRooms(ms.ListRoomsRequest()))

                async def spectate() -> None:
                    async for _ in stub.Spectate(ms.SpectateRequest(match_id=match_id)):
                        pass

                await refused(spectate)
                # other services: refused the same way, served on the TCP port or not
                health = health_pb2_grpc.HealthStub(bots)
                await refused(lambda: health.Check(health_pb2.HealthCheckRequest()))
                ladder = ladder_pb2_grpc.LadderServiceStub(bots)
                await refused(
                    lambda: ladder.AddBot(ladder_pb2.AddBotRequest(bot_name="x", spec="connect"))
                )
            # the TCP port still serves everything
            async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as tcp:
                listed = await match_service_pb2_grpc.MatchServiceStub(tcp).ListMatches(
                    ms.ListMatchesRequest()
                )
                assert match_id in [m.match_id for m in listed.matches]
        finally:
            await running.stop()

    asyncio.run(main())


def test_a_bad_bot_socket_stops_the_server_with_one_line(folder: Path) -> None:
    long = folder / ("x" * 120)
    for path, said in (
        (long, "at most 107 bytes"),
        (folder / "nowhere" / "bot.sock", "no folder"),
        (folder, "is not a socket"),
    ):
        argv = ["server", "--listen", "127.0.0.1:0", "--db", ":memory:", "--bot-socket", str(path)]
        run = subprocess.run(
            [sys.executable, "-m", "cirulla", *argv],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 2, run
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and "--bot-socket" in lines[0], lines
