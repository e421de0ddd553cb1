"""A sandboxed bot reaches the ladder's match server's Play and nothing else.

Its relay forwarded ``/run/cirulla/server.sock`` to the ladder's TCP port, where every
rpc is served: a hostile bot listed the matches and, under ``--insecure-open``,
registered a bot of its own (a place to spell a hand it holds for its twin's process to
read). The relay now forwards to the match server's bot socket (``--bot-socket``,
``cirulla.server.bot_socket``), which serves Play only. A real ladder, real bubblewrap
sandboxes, real gRPC."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from cirulla.server.bot_socket import REFUSED
from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, open_store, wait_for

REFUSAL = f"PERMISSION_DENIED {REFUSED}"

#: A managed bot that, from inside its sandbox, calls what its socket should not serve,
#: says on stderr (its log) what it got, then plays as ``cirulla bot random``.
PROBE = r"""
import os, sys
import grpc
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc, match_service_pb2, match_service_pb2_grpc

def probe(name, call):
    try:
        reply = call()
        print("PROBE", name, "answered", str(reply).replace("\n", " ")[:200], file=sys.stderr)
    except grpc.RpcError as exc:
        print("PROBE", name, "refused", exc.code().name, exc.details(), file=sys.stderr)

server = os.environ.get("CIRULLA_SERVER", "unix:/run/cirulla/server.sock")
with grpc.insecure_channel(server) as channel:
    matches = match_service_pb2_grpc.MatchServiceStub(channel)
    ladder = ladder_pb2_grpc.LadderServiceStub(channel)
    probe("ListMatches", lambda: matches.ListMatches(
        match_service_pb2.ListMatchesRequest(), timeout=10))
    probe("GetMatch", lambda: matches.GetMatch(
        match_service_pb2.GetMatchRequest(match_id=os.environ.get("CIRULLA_MATCH", "")),
        timeout=10))
    probe("AddBot", lambda: ladder.AddBot(
        ladder_pb2.AddBotRequest(bot_name="spy-added", spec="connect"), timeout=10))
print("PROBE done", file=sys.stderr, flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])
"""


@pytest.mark.slow
def test_a_sandboxed_bot_reaches_play_and_nothing_else(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    data = folder / "cirulla-ladder-data"
    db = folder / "l.sqlite3"
    ladder = LadderProcess(folder, f"sqlite:///{db}", "--insecure-open")
    try:
        ladder.start()
        script = tmp_path / "bots" / "probe.py"
        script.parent.mkdir()
        script.write_text(PROBE)
        ladder.add("random", "random")
        ladder.add("probe", f"cmd:{sys.executable} {script}")
        stub = ladder.stub()

        def played() -> list[Any]:
            history = stub.GetBotHistory(
                ladder_pb2.GetBotHistoryRequest(bot_name="probe", page_size=100)
            )
            return [
                m
                for m in history.matches
                if m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED
                and all(s.outcome == "ok" for s in m.seats)
            ]

        # Play still works through the bot socket: the probe's games end normally
        wait_for(played, 240, "a finished game of the probe", every=0.2)
        lines = [
            line
            for log in (data / "logs").glob("*.log")
            for line in log.read_text(errors="replace").splitlines()
            if line.startswith("PROBE")
        ]
        assert "PROBE done" in lines, lines
        said = [line for line in lines if line != "PROBE done"]
        assert {line.split()[1] for line in said} == {"ListMatches", "GetMatch", "AddBot"}, said
        # on the old relay: ListMatches and GetMatch answered, AddBot added "spy-added"
        answered = [line for line in said if line.split()[2:] != ["refused", *REFUSAL.split()]]
        assert not answered, "\n".join(sorted({line[:110] for line in answered}))
        store = open_store(f"sqlite:///{db}")
        try:
            assert "spy-added" not in [bot["name"] for bot in store.list_bots()]
        finally:
            store.engine.dispose()
    finally:
        ladder.stop()
