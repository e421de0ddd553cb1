"""Bots kept alive between games: the stdin assignment protocol (``cirulla.bots.loop``), the
runner's pool of long-lived processes, and restarts after a crash. Real server subprocess,
real bot processes."""

from __future__ import annotations

import io
import json
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.bots import loop as loop_module
from cirulla.bots.botspec import BotSpec, parse_bots
from cirulla.bots.kit import run_bot
from cirulla.bots.loop import Assignment, serve
from cirulla.bots.simple import RandomPolicy
from cirulla.cli import main
from cirulla.clients.matches.journal import Settings
from cirulla.clients.matches.referee import match_settings
from cirulla.clients.matches.seat_argv import seat_values, served_argv
from cirulla.clients.matches.supervise import LIVE, LocalServer, ServedBot
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc

ADMIN = "served-test-admin"

# A served bot that plays its first match with the kit, then exits without reporting
# it: the runner must start a fresh process for its next game.
ONE_MATCH_BOT = """
import sys
from cirulla.bots.kit import run_bot
from cirulla.bots.loop import Assignment
from cirulla.bots.simple import RandomPolicy

print('{"ready": true}', flush=True)
a = Assignment.from_line(sys.stdin.readline())
run_bot(RandomPolicy(seed=1), server=a.server, match_id=a.match, token=a.token, name=a.name)
"""


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Any:
    yield
    assert not LIVE._children, "a server or bot process was left running"


@pytest.fixture
def server(tmp_path: Path) -> Any:
    local = LocalServer(tmp_path / "server.sqlite3", tmp_path / "logs" / "server.log", ADMIN)
    (tmp_path / "logs").mkdir()
    address = local.start()
    try:
        yield address
    finally:
        local.stop()


def create_match(stub: Any, seed: int) -> tuple[str, dict[int, str]]:
    settings = Settings(bots=parse_bots({"a": "random", "b": "random"}), rules={"target": 11})
    created = stub.CreateMatch(
        match_service_pb2.CreateMatchRequest(settings=match_settings(settings, seed)),
        metadata=(("authorization", f"Bearer {ADMIN}"),),
        timeout=10,
    )
    return created.match.match_id, {t.seat: t.token for t in created.seat_tokens}


def test_one_process_plays_match_after_match(server: str, tmp_path: Path) -> None:
    channel = grpc.insecure_channel(server)
    stub = match_service_pb2_grpc.MatchServiceStub(channel)
    bots = [
        ServedBot(served_argv(BotSpec.parse(spec), spec), tmp_path / "logs" / f"{spec}.log")
        for spec in ("random", "greedy")
    ]
    try:
        pids = [b.pid for b in bots]
        for seed in (1, 2, 3):
            match_id, tokens = create_match(stub, seed)
            tickets = [
                bot.assign(
                    seat_values(
                        server=server,
                        match=match_id,
                        token=tokens[seat],
                        seat=seat,
                        name=f"bot{seat}",
                        seed=seed,
                    )
                )
                for seat, bot in enumerate(bots)
            ]
            for ticket in tickets:
                assert ticket.done.wait(30), "the bot did not report the end of its match"
                assert (ticket.code, ticket.exited, ticket.error) == (0, False, None)
            match = stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=match_id)).match
            assert match.status == match_pb2.MATCH_STATUS_FINISHED
        assert [b.pid for b in bots] == pids and all(b.alive() for b in bots)
        log = (tmp_path / "logs" / "random.log").read_text()
        assert log.count("assignment: match") == 3
    finally:
        for bot in bots:
            bot.stop(grace=20)
        channel.close()
    assert [b.poll() for b in bots] == [0, 0]  # end of stdin: a clean exit


def test_a_refused_assignment_is_reported_and_the_bot_plays_on(server: str, tmp_path: Path) -> None:
    channel = grpc.insecure_channel(server)
    stub = match_service_pb2_grpc.MatchServiceStub(channel)
    bot = ServedBot(served_argv(BotSpec.parse("random"), "r"), tmp_path / "logs" / "r.log")
    try:
        match_id, _ = create_match(stub, 5)
        values = seat_values(
            server=server, match=match_id, token="not-a-token", seat=0, name="r", seed=1
        )
        ticket = bot.assign(values)
        assert ticket.done.wait(30)
        assert ticket.code == 1 and not ticket.exited
        assert "UNAUTHENTICATED" in (ticket.error or "")
        assert bot.alive()
    finally:
        bot.stop()
        channel.close()


def test_bad_assignment_lines_name_the_field() -> None:
    out = io.StringIO()
    lines = ['{"server": "127.0.0.1:1", "match": "m"}\n', "not json\n", "\n"]
    assert serve(lambda view, legal, left: 0, lines=lines, control=out) == 0
    ready, *reports = [json.loads(line) for line in out.getvalue().splitlines()]
    assert ready == {"ready": True}
    assert len(reports) == 2
    assert reports[0] == {
        "done": None,
        "code": 2,
        "error": "assignment field 'token' must be a non-empty string",
    }
    assert reports[1]["code"] == 2 and "not JSON" in reports[1]["error"]
    with pytest.raises(ValueError, match="'seat' must be int"):
        Assignment.from_line('{"server": "s", "match": "m", "token": "t", "seat": "0"}')
    line = Assignment("s", "m", "t", seat=1, seed=9).to_line()
    assert Assignment.from_line(line) == Assignment("s", "m", "t", seat=1, seed=9)


def test_one_connection_serves_match_after_match(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve() keeps its event loop and channel between matches on the same server: a
    channel per match cost the bot and the server a connection set-up every game."""
    opened: list[str] = []
    real_open = loop_module.open_aio_channel

    def counting_open(address: str, tls_ca: str | None = None) -> Any:
        opened.append(address)
        return real_open(address, tls_ca)

    monkeypatch.setattr(loop_module, "open_aio_channel", counting_open)
    stub = match_service_pb2_grpc.MatchServiceStub(grpc.insecure_channel(server))
    matches = [create_match(stub, seed) for seed in (11, 12, 13)]
    lines = [
        Assignment(server, match_id, tokens[0], seat=0, seed=1).to_line()
        for match_id, tokens in matches
    ]
    others = [
        threading.Thread(
            target=run_bot,
            args=(RandomPolicy(seed=2),),
            kwargs={"server": server, "match_id": match_id, "token": tokens[1]},
        )
        for match_id, tokens in matches
    ]
    for thread in others:
        thread.start()
    out = io.StringIO()
    assert serve(RandomPolicy(seed=1), lines=lines, control=out) == 0
    for thread in others:
        thread.join(30)
    reports = [json.loads(line) for line in out.getvalue().splitlines()[1:]]
    assert reports == [{"done": match_id, "code": 0} for match_id, _ in matches]
    for match_id, _ in matches:
        match = stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=match_id)).match
        assert match.status == match_pb2.MATCH_STATUS_FINISHED
    assert opened == [server]


def test_a_served_bot_that_dies_is_restarted_for_its_next_game(tmp_path: Path) -> None:
    script = tmp_path / "one_match.py"
    script.write_text(ONE_MATCH_BOT)
    out = tmp_path / "t"
    spec = f"once=serve:{{python}} {script}"
    args = ["tournament", "--out", str(out), "--bot", spec, "--bot", "greedy"]
    args += ["--games", "4", "--concurrency", "1", "--target", "11", "--seed", "3"]
    assert main(args) == 0
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 4
    for game in games:
        assert game["seat_outcomes"] == ["ok", "ok"], game["notes"]
    # One process per game for the bot that dies after each match; greedy stays alive:
    # two processes, one per game of each duplicate pair (never both: fair play).
    assert len(list((out / "logs").glob("once-*.log"))) == 4
    assert len(list((out / "logs").glob("greedy-*.log"))) == 2


def test_python_placeholder_is_the_runners_interpreter() -> None:
    assert served_argv(BotSpec.parse("serve:{python} bot.py --name {name}"), "me") == [
        sys.executable,
        "bot.py",
        "--name",
        "me",
    ]


STAMPING_BOT = """
import sys, time
with open(sys.argv[1], "a") as f:  # first thing: when this process started
    f.write(f"{time.time()}\\n")
from cirulla.bots.loop import serve
from cirulla.bots.simple import RandomPolicy
sys.exit(serve(RandomPolicy(seed=1)))
"""


def test_the_first_games_bots_start_before_the_server_and_are_the_ones_used(
    tmp_path: Path,
) -> None:
    """The runner starts the first games' kept-alive bots before its match server (their
    start-up overlaps the server's), and those very processes play the games."""
    script = tmp_path / "stamping.py"
    script.write_text(STAMPING_BOT)
    stamps = tmp_path / "started.txt"
    out = tmp_path / "t"
    spec = f"s=serve:{{python}} {script} {stamps}"
    args = ["tournament", "--out", str(out), "--bot", spec, "--bot", "greedy"]
    args += ["--games", "4", "--concurrency", "2", "--target", "11", "--seed", "5"]
    assert main(args) == 0
    started = [float(line) for line in stamps.read_text().split()]
    # one per concurrency slot, and at most one more per slot while the first pair is
    # open (its processes play nothing else until it ends: docs/tournament.md)
    assert 2 <= len(started) <= 4
    server_log = (out / "logs" / "server.log").read_text()
    ts = server_log.split("server_started", 1)[0].rsplit("ts=", 1)[1].split()[0]
    server_ready = datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    assert sorted(started)[1] < server_ready  # the first two before the server was up
    logs = sorted(p.name for p in (out / "logs").glob("[sg]*-*.log"))
    assert [name for name in logs if name.startswith("s-")][:2] == ["s-1.log", "s-2.log"]
    # greedy's two processes started ahead play too; a process slow to say it left its
    # game (EXIT_GRACE, on a busy machine) is replaced by a third for a later game
    assert {"greedy-1.log", "greedy-2.log"} <= set(logs)
    assert all((out / "logs" / name).stat().st_size > 0 for name in logs)
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 4 and all(g["seat_outcomes"] == ["ok", "ok"] for g in games)
