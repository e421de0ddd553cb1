"""SIGKILL and restart: of the match server (its database keeps every finished game and
marks interrupted matches aborted) and of the tournament runner (its embedded server dies
with it, and --resume finishes the tournament)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc

from cirulla.bots.processes import cirulla_command
from cirulla.server.client import ManualSeat, hello, play_seat, random_choice
from cirulla.v1 import match_pb2, match_service_pb2_grpc, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import server_command, tied_to_this_process


def start_server(db: Path, port_file: Path) -> subprocess.Popen[bytes]:
    port_file.unlink(missing_ok=True)
    argv = server_command("--listen", "127.0.0.1:0", "--port-file", str(port_file), "--db", str(db))
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return proc
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("server not ready")


def settings() -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)), seed=9
    )


def test_sigkill_of_the_server_then_restart(tmp_path: Path) -> None:
    db, port_file = tmp_path / "s.sqlite3", tmp_path / "port"

    async def before_kill(address: str) -> tuple[str, str, str]:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            done = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
            rng = random.Random(1)
            await asyncio.gather(
                *(
                    play_seat(stub, done.match.match_id, t.token, random_choice(rng))
                    for t in done.seat_tokens
                )
            )
            running = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
            seats = [ManualSeat(stub) for _ in range(2)]
            for i, seat in enumerate(seats):
                seat.send(hello(running.match.match_id, running.seat_tokens[i].token))
            for seat in seats:
                await seat.next("new_game")
            waiting = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
            for seat in seats:
                seat.close()
            return done.match.match_id, running.match.match_id, waiting.match.match_id

    proc = start_server(db, port_file)
    try:
        address = f"127.0.0.1:{port_file.read_text().strip()}"
        done, running, waiting = asyncio.run(before_kill(address))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    async def after_restart(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            record = await stub.GetRecord(ms.GetRecordRequest(record_id=f"{done}-g1"))
            assert record.record.result.totals
            finished = (await stub.GetMatch(ms.GetMatchRequest(match_id=done))).match
            assert finished.status == match_pb2.MATCH_STATUS_FINISHED
            for mid in (running, waiting):
                match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
                assert match.status == match_pb2.MATCH_STATUS_ABORTED, mid
                assert "server stopped" in match.abort_reason
            fresh = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings()))
            assert fresh.match.match_id not in (done, running, waiting)
            # a new match's id shares no counter prefix with the old ones
            assert fresh.match.match_id.rsplit("-", 1)[0] != done.rsplit("-", 1)[0]
            rng = random.Random(2)
            await asyncio.gather(
                *(
                    play_seat(stub, fresh.match.match_id, t.token, random_choice(rng))
                    for t in fresh.seat_tokens
                )
            )
            again = (await stub.GetMatch(ms.GetMatchRequest(match_id=fresh.match.match_id))).match
            assert again.status == match_pb2.MATCH_STATUS_FINISHED

    proc = start_server(db, port_file)
    try:
        asyncio.run(after_restart(f"127.0.0.1:{port_file.read_text().strip()}"))
    finally:
        proc.terminate()
        proc.wait(10)


def server_pids(out: Path) -> list[int]:
    """Live ``cirulla server`` processes whose command line names the tournament folder."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().split()[2]
        except OSError:
            continue
        text = b" ".join(argv).decode(errors="replace")
        if b"server" in argv and str(out) in text and state != "Z":
            found.append(int(proc.name))
    return found


def test_sigkill_of_the_tournament_runner_takes_its_server_along(tmp_path: Path) -> None:
    out = tmp_path / "t"
    argv = [*cirulla_command(), "tournament", "--out", str(out), "--seed", "3"]
    argv += ["--bot", "random", "--bot", "greedy", "--games", "4", "--concurrency", "1"]
    argv += ["--target", "11"]
    proc = subprocess.Popen(
        tied_to_this_process(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not (out / "games.jsonl").exists():
            time.sleep(0.1)
        assert (out / "games.jsonl").exists()
        assert out.stat().st_mode & 0o077 == 0, "the output folder (seed, records) is not private"
        assert server_pids(out), "no embedded server found"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and server_pids(out):
            time.sleep(0.1)
        assert server_pids(out) == [], "the embedded server outlived its runner"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in server_pids(out):
            os.kill(pid, signal.SIGKILL)
    resumed = subprocess.run(
        [*cirulla_command(), "tournament", "--resume", str(out)],
        capture_output=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    lines = (out / "games.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["index"] for line in lines) == list(range(4))
    assert server_pids(out) == []
    assert sys.executable  # the runner used this interpreter (cirulla_command)
