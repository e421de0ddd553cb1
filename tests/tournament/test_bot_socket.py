"""A sandboxed tournament bot reaches its match server's Play and nothing else: the
runner starts its server with ``--bot-socket`` in the relay's folder and the relay
forwards there (``cirulla.server.bot_socket``). A real runner, real bubblewrap."""

from __future__ import annotations

import json
import subprocess
import sys
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
