"""Reconnection delays with full jitter (issue 25, item 10).

When a server restarts, every client it served loses its stream at the same moment;
with a plain doubling schedule they all come back together, attempt after attempt. The
kit's clients and the ladder's connect-in bots draw each delay uniformly below the
exponential ceiling instead (``cirulla.bots.kit.reconnect_delay``). Tested on the
helper, on two real kit clients across a real server restarted on the same port, and
on two ladder bots retrying a closed port.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import socket
import threading
import time
from pathlib import Path

import grpc
import pytest

from cirulla.bots.enroll import LadderBot
from cirulla.bots.kit import BotClient, BotError, reconnect_delay
from cirulla.bots.simple import RandomPolicy
from cirulla.server.app import start_server
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, rules_pb2


def test_delays_are_within_the_exponential_ceiling_and_differ_between_clients() -> None:
    base, cap = 0.2, 5.0
    clients = [random.Random(seed) for seed in range(6)]
    schedules = [[reconnect_delay(n, base, cap, rng) for n in range(12)] for rng in clients]
    for schedule in schedules:
        for n, delay in enumerate(schedule):
            assert 0.0 <= delay <= min(cap, base * 2 ** max(0, n - 1)), (n, delay)
    # at every attempt the clients wait different times (a plain doubling schedule
    # would give them all the same delay)
    for n in range(12):
        assert len({s[n] for s in schedules}) == len(schedules), n
    # and they cover the window: late attempts are spread over [0, cap]
    late = [reconnect_delay(20, base, cap, random.Random(s)) for s in range(200)]
    assert min(late) < cap / 4 and max(late) > 3 * cap / 4
    # an endless retry loop (the ladder bot's) never overflows
    assert 0.0 <= reconnect_delay(10_000, base, cap) <= cap


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def two_player_settings() -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11))
    )


def delays_by_match(records: list[logging.LogRecord]) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for r in records:
        m = re.match(r"reconnecting to match (\S+) in ([0-9.]+)s", r.getMessage())
        if m:
            found.setdefault(m.group(1), []).append(float(m.group(2)))
    return found


def test_kit_clients_reconnect_to_a_restarted_server_on_jittered_schedules(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two kit clients hold seats when the server stops; it comes back on the same port
    (same database) 1.5 s later. Both reach the new server (it tells them their matches
    were cut by the stop) and waited different times in between."""
    caplog.set_level(logging.INFO, logger="cirulla.bots.kit")
    db = tmp_path / "server.sqlite3"
    address = f"127.0.0.1:{free_port()}"

    async def main() -> list[BaseException | object]:
        srv = await start_server(address, db)
        async with grpc.aio.insecure_channel(address) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            created = [
                await stub.CreateMatch(ms.CreateMatchRequest(settings=two_player_settings()))
                for _ in range(2)
            ]
        clients = [
            BotClient(
                RandomPolicy(),
                server=address,
                match_id=c.match.match_id,
                token=c.seat_tokens[0].token,
                retries=30,
                backoff=0.1,
                max_backoff=1.0,
                jitter=random.Random(seed),
            )
            for seed, c in enumerate(created)
        ]
        tasks = [asyncio.create_task(c.run_async()) for c in clients]
        deadline = time.monotonic() + 20
        while not all(c._welcomed for c in clients):
            assert time.monotonic() < deadline, "the clients never joined"
            await asyncio.sleep(0.05)
        await srv.stop()  # Goodbye SERVER_SHUTDOWN, then nothing listens on the port
        await asyncio.sleep(1.5)
        again = await start_server(address, db)
        try:
            return list(await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30))
        finally:
            await again.stop()

    results = asyncio.run(main())
    # each reached the restarted server, which alone knows the match was cut by the stop
    # (the stopping one said SERVER_SHUTDOWN: "the match may resume later")
    for result in results:
        assert isinstance(result, BotError), result
        assert "is aborted" in str(result), result  # the new server's answer to the resume
    delays = delays_by_match(caplog.records)
    assert len(delays) == 2, caplog.text
    first, second = delays.values()
    assert len(first) >= 2 and len(second) >= 2, delays  # retried while the port was closed
    pairs = list(zip(first, second, strict=False))
    assert any(a != b for a, b in pairs), delays  # not the same schedule
    for schedule in delays.values():
        assert all(0.0 <= d <= 1.0 for d in schedule), schedule


def test_ladder_bots_retry_a_closed_port_on_jittered_schedules(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="cirulla.bots.enroll")
    ladder = f"127.0.0.1:{free_port()}"  # nothing listens there
    stop = threading.Event()
    bots = [
        LadderBot(
            RandomPolicy,
            ladder,
            f"bot{seed}",
            "key",
            backoff=0.05,
            max_backoff=0.3,
            jitter=random.Random(seed),
        )
        for seed in range(2)
    ]
    threads = [threading.Thread(target=b.run, args=(stop,)) for b in bots]
    for t in threads:
        t.start()
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join(10)
        assert not t.is_alive()
    delays: dict[str, list[float]] = {}
    for r in caplog.records:
        m = re.match(r"re-enrolling (\S+) on \S+ in ([0-9.]+)s", r.getMessage())
        if m:
            delays.setdefault(m.group(1), []).append(float(m.group(2)))
    assert set(delays) == {"bot0", "bot1"}, caplog.text
    assert all(len(d) >= 3 for d in delays.values()), delays
    assert any(a != b for a, b in zip(delays["bot0"], delays["bot1"], strict=False)), delays
    assert all(0.0 <= d <= 0.3 for d in delays["bot0"] + delays["bot1"])
