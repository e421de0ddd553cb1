"""A sandboxed tournament bot reaches its match server's Play and nothing else: the
runner starts its server with ``--bot-socket`` in the relay's folder and the relay
forwards there (``cirulla.server.bot_socket``). A real runner, real bubblewrap."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from cirulla.server.bot_socket import REFUSED

#: A cmd: bot that reads what it should not through its socket (the other games, its
#: own without its token), says what it got on stderr, then plays as `cirulla bot random`.
PROBE = r"""
import os, sys
import grpc
from cirulla.v1 import match_service_pb2 as ms, match_service_pb2_grpc

def probe(name, call):
    try:
        print("PROBE", name, "answered", str(call()).replace("\n", " ")[:200], file=sys.stderr)
    except grpc.RpcError as exc:
        print("PROBE", name, "refused", exc.code().name, exc.details(), file=sys.stderr)

with grpc.insecure_channel(os.environ["CIRULLA_SERVER"]) as channel:
    stub = match_service_pb2_grpc.MatchServiceStub(channel)
    probe("ListMatches", lambda: stub.ListMatches(ms.ListMatchesRequest(), timeout=10))
    probe("ListRecords", lambda: stub.ListRecords(ms.ListRecordsRequest(), timeout=10))
print("PROBE done", file=sys.stderr, flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])
"""


def test_a_sandboxed_tournament_bot_reaches_play_and_nothing_else(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out), "--target", "11"]
    argv += ["--sandbox", "--bot", f"probe=cmd:{{python}} {script}", "--bot", "greedy"]
    argv += ["--games", "2"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [
        line
        for log in (out / "logs").glob("*.log")
        for line in log.read_text(errors="replace").splitlines()
        if line.startswith("PROBE")
    ]
    said = [line for line in lines if line != "PROBE done"]
    assert len(said) == 4 and lines.count("PROBE done") == 2, lines  # one probe per game
    # on the former relay (the server's TCP port) both answered
    wrong = [line for line in said if line.split()[2:4] != ["refused", "PERMISSION_DENIED"]]
    assert not wrong, wrong
    assert all(line.split(maxsplit=4)[4] == REFUSED for line in said), said
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert [g["seat_outcomes"] for g in games] == [["ok", "ok"]] * 2, games


def _probe_lines(out: Path) -> list[str]:
    return [
        line
        for log in (out / "logs").glob("*.log")
        for line in log.read_text(errors="replace").splitlines()
        if line.startswith("PROBE") and line != "PROBE done"
    ]


def test_a_given_server_s_bot_socket_keeps_sandboxed_bots_to_play(tmp_path: Path) -> None:
    """With ``--server`` the runner did not start the server: ``--server-bot-socket``
    names that server's ``--bot-socket``; without it the bots reach every rpc of the
    given port, and the run says so once."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    socket_path, port_file = tmp_path / "bots.sock", tmp_path / "port"
    argv = [sys.executable, "-m", "cirulla", "server", "--listen", "127.0.0.1:0"]
    argv += ["--port-file", str(port_file), "--db", str(tmp_path / "server.sqlite3")]
    argv += ["--bot-socket", str(socket_path), "--admin-token", "t0ken"]
    server = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (port_file.exists() and socket_path.is_socket()):
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.05)
        address = f"127.0.0.1:{port_file.read_text().strip()}"
        base = [sys.executable, "-m", "cirulla", "tournament", "--target", "11", "--sandbox"]
        base += ["--bot", f"probe=cmd:{{python}} {script}", "--bot", "greedy", "--games", "2"]
        base += ["--server", address, "--admin-token", "t0ken"]
        runs = {}
        for name, extra in (("kept", ["--server-bot-socket", str(socket_path)]), ("open", [])):
            out = tmp_path / name
            done = subprocess.run(
                [*base, "--out", str(out), *extra],
                capture_output=True,
                text=True,
                timeout=240,
                check=False,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            runs[name] = (done.stdout, _probe_lines(out))
    finally:
        server.terminate()
        server.wait(30)
    stdout, kept = runs["kept"]
    assert len(kept) == 4 and all(line.split(maxsplit=4)[4] == REFUSED for line in kept), kept
    assert "warning" not in stdout
    stdout, opened = runs["open"]  # what --server-bot-socket prevents
    assert len(opened) == 4 and all(line.split()[2] == "answered" for line in opened), opened
    assert "reach every rpc of --server" in " ".join(stdout.split())
    bad = subprocess.run(
        [*base, "--out", str(tmp_path / "bad"), "--server-bot-socket", str(port_file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "not a socket" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "bad").exists()
