"""Bots as separate processes against a real server: every kind, 2, 3 and 4 players.

The server runs as ``cirulla server --listen 127.0.0.1:0 --port-file ...`` (a subprocess,
real SQLite file); each seat is a ``cirulla bot ...`` process, exactly as a tournament
launches them. MCTS gets a tiny budget so the suite stays fast.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc
import pytest

from cirulla.bots.botspec import bot_command
from cirulla.bots.kit import run_bot
from cirulla.clients.matches.supervise import LocalServer
from cirulla.rules import Action, View
from cirulla.v1 import (
    events_pb2,
    match_service_pb2,
    match_service_pb2_grpc,
    match_settings_pb2,
    rules_pb2,
)

CIRULLA = [sys.executable, "-m", "cirulla"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``cirulla server`` subprocess, started the way the tournament runner does."""
    tmp = tmp_path_factory.mktemp("bots-server")
    with LocalServer(tmp / "server.sqlite3", tmp / "server.log") as local:
        yield local.address


def create_match(
    address: str,
    players: int,
    target: int,
    seed: int,
    move_limit_ms: int = 0,
    margin_ms: int = 0,
) -> tuple[str, list[str]]:
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(
            preset=rules_pb2.PRESET_STANDARD,
            overrides=rules_pb2.RuleOptions(players=players, target=target),
        ),
        best_of=1,
        seed=seed,
        time_control=match_settings_pb2.TimeControl(
            move_limit_ms=move_limit_ms, margin_ms=margin_ms
        ),
        timeout_policy=match_settings_pb2.TIMEOUT_POLICY_FORFEIT_GAME,
    )
    with grpc.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        reply = stub.CreateMatch(
            match_service_pb2.CreateMatchRequest(settings=settings), timeout=10
        )
    tokens = sorted(reply.seat_tokens, key=lambda t: t.seat)
    return reply.match.match_id, [t.token for t in tokens]


def get_match(address: str, match_id: str):
    with grpc.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        return stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=match_id), timeout=10)


def run_bots(
    address: str, match_id: str, tokens: list[str], specs: list[str], log_dir: Path
) -> list[tuple[int, str]]:
    procs = []
    for seat, (spec, token) in enumerate(zip(specs, tokens, strict=True)):
        args = bot_command(spec, address, match_id, token, name=f"{spec}-{seat}", seed=seat)
        log = (log_dir / f"seat{seat}.log").open("w")
        procs.append((subprocess.Popen([*CIRULLA, *args], stdout=log, stderr=log), log))
    deadline = time.monotonic() + 240
    while any(p.poll() is None for p, _ in procs) and time.monotonic() < deadline:
        if any(p.poll() not in (None, 0) for p, _ in procs):
            break  # one seat failed: the match cannot finish, stop the others
        time.sleep(0.05)
    results = []
    for seat, (proc, log) in enumerate(procs):
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        log.close()
        results.append((code, (log_dir / f"seat{seat}.log").read_text()))
    return results


@pytest.mark.parametrize(
    "specs",
    [
        ["random", "greedy"],
        ["mcts:iterations=30", "greedy"],
        ["greedy", "mcts:iterations=30,workers=2", "random"],
        ["mcts:iterations=30", "random", "greedy", "mcts:iterations=20"],
    ],
    ids=["2p-random-greedy", "2p-mcts-greedy", "3p-all-kinds", "4p-all-kinds"],
)
def test_bots_play_a_whole_match_as_processes(
    server: str, specs: list[str], tmp_path: Path
) -> None:
    match_id, tokens = create_match(server, players=len(specs), target=21, seed=len(specs))
    results = run_bots(server, match_id, tokens, specs, tmp_path)
    for seat, (code, log) in enumerate(results):
        assert code == 0, f"seat {seat} ({specs[seat]}) exited {code}:\n{log}"
        assert "match over" in log
    match = get_match(server, match_id).match
    assert match.HasField("result") and match.result.HasField("winner_side")
    winner = match.result.winner_side
    assert 0 <= winner < (2 if len(specs) == 4 else len(specs))


def test_bot_with_a_wrong_token_fails_clearly(server: str, tmp_path: Path) -> None:
    match_id, tokens = create_match(server, players=2, target=11, seed=9)
    args = bot_command("random", server, match_id, tokens[0] + "x")
    proc = subprocess.run([*CIRULLA, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "UNAUTHENTICATED" in proc.stderr


def test_bot_help_lists_kinds_and_options() -> None:
    out = subprocess.run(
        [*CIRULLA, "bot", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    for word in (
        "random",
        "greedy",
        "mcts",
        "--iterations",
        "--time",
        "--workers",
        "--c",
        "--option",
    ):
        assert word in out


def test_example_bot_plays_a_match(server: str, tmp_path: Path) -> None:
    match_id, tokens = create_match(server, players=2, target=21, seed=5)
    env = {**os.environ, "CIRULLA_SERVER": server, "CIRULLA_MATCH": match_id}
    env["CIRULLA_TOKEN"] = tokens[0]
    example = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve().parents[2] / "examples" / "example_bot.py")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    ((code, log),) = run_bots(server, match_id, tokens[1:], ["greedy"], tmp_path)
    out, _ = example.communicate(timeout=120)
    assert example.returncode == 0, out
    assert code == 0, log
    assert get_match(server, match_id).match.result.HasField("winner_side")


def test_mcts_keeps_to_the_move_clock(server: str, tmp_path: Path) -> None:
    # 300 ms a move and forfeit on timeout; mcts asks for 5 s and must cut itself short.
    # The server's margin (1.5 s, never shown to the bot) absorbs a loaded machine's
    # scheduling delays; a bot that searched its 5 s would still overrun it by far.
    match_id, tokens = create_match(
        server, players=2, target=11, seed=8, move_limit_ms=300, margin_ms=1500
    )
    results = run_bots(server, match_id, tokens, ["mcts:time=5", "random"], tmp_path)
    assert [code for code, _ in results] == [0, 0], results
    # mcts stops itself within its budget (90% of what the kit passes); should a loaded
    # machine still delay it past the kit's grace, the kit answers in time anyway and
    # signals the search to stop: either way the server never times the seat out.
    match = get_match(server, match_id).match
    assert match.seats[0].timeouts == 0, results[0][1]
    games = match.result.games
    # (on a loaded machine even the random bot may miss a 300 ms clock: only mcts counts)
    assert games and not any(
        g.reason == events_pb2.GAME_END_REASON_FORFEIT and g.forfeit_seat == 0 for g in games
    )


class DroppingProxy:
    """A TCP forwarder between a bot and the server that can cut every connection at once."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def drop(self) -> None:
        with self.lock:
            for s in self.sockets:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self.sockets.clear()

    def close(self) -> None:
        self.listener.close()
        self.drop()


def test_bot_reconnects_and_resumes_after_a_dropped_stream(server: str, tmp_path: Path) -> None:
    proxy = DroppingProxy(server)
    try:
        match_id, tokens = create_match(server, players=2, target=31, seed=12)
        log_path = tmp_path / "dropped.log"
        with log_path.open("w") as log:
            args = bot_command("greedy", proxy.address, match_id, tokens[0], seed=1)
            dropped = subprocess.Popen(
                [*CIRULLA, *args, "--log-level", "debug"], stdout=log, stderr=log
            )
            other = subprocess.Popen(
                [*CIRULLA, *bot_command("mcts:iterations=60", server, match_id, tokens[1], seed=2)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 60
            while "decision_request" not in log_path.read_text():
                assert time.monotonic() < deadline, "the bot never got a decision"
                time.sleep(0.05)
            proxy.drop()
            assert dropped.wait(timeout=240) == 0, log_path.read_text()
            assert other.wait(timeout=240) == 0
        text = log_path.read_text()
        assert "reconnecting" in text and "(resumed)" in text
        assert "match over" in text
    finally:
        proxy.close()


def test_kit_plays_the_default_action_when_the_policy_fails(server: str, tmp_path: Path) -> None:
    match_id, tokens = create_match(server, players=2, target=11, seed=21)
    calls: list[int] = []

    def flaky(view: View, legal: Sequence[Action], time_left: float | None) -> int:
        calls.append(len(legal))
        if len(calls) == 1:
            return len(legal)  # out of range: the kit must not send it
        return 0

    other = subprocess.Popen(
        [*CIRULLA, *bot_command("greedy", server, match_id, tokens[1])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    outcome = run_bot(flaky, server=server, match_id=match_id, token=tokens[0], name="flaky")
    assert other.wait(timeout=120) == 0
    assert outcome.seat == 0 and outcome.winner_side in (0, 1)
    assert outcome.defaults_played == 1 and outcome.decisions == len(calls)
    assert outcome.rejected == 0


def test_bot_refuses_an_option_its_kind_does_not_have() -> None:
    proc = subprocess.run(
        [
            *CIRULLA,
            "bot",
            "greedy",
            "--server=127.0.0.1:1",
            "--match=m",
            "--token=t",
            "--iterations",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "bot kind 'greedy' has no option 'iterations'" in proc.stderr
