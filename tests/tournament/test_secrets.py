"""Seat tokens never appear on a command line (issue 12): a real tournament starts a real
``cmd:`` bot, and while that bot waits the test reads every process's command line.

A ``cmd:`` spec with the retired ``{token}`` placeholder is refused before anything starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cirulla.bots.botspec import BotSpec
from cirulla.clients.matches.seat_argv import bot_argv, program_env, seat_values
from tests.server_harness import tied_to_this_process

# A cmd: bot that says where it is (its pid), waits until the test has looked at it, then
# becomes `cirulla bot random`, which reads server, match and token from CIRULLA_*.
PEEK_BOT = """
import os, sys, time
from pathlib import Path

folder = Path(sys.argv[1])
(folder / f"{os.getpid()}.pid").write_text(os.environ["CIRULLA_SEAT"])
deadline = time.monotonic() + 120
while not (folder / "go").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])
"""

CIRULLA = [sys.executable, "-m", "cirulla"]


def every_command_line() -> dict[int, bytes]:
    lines = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                lines[int(proc.name)] = (proc / "cmdline").read_bytes()
            except OSError:
                continue
    return lines


def environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(): v.decode(errors="replace") for k, v in pairs}


def test_a_cmd_bot_gets_its_token_in_the_environment_never_on_its_command_line(
    tmp_path: Path,
) -> None:
    script = tmp_path / "peek_bot.py"
    script.write_text(PEEK_BOT)
    pids = tmp_path / "pids"
    pids.mkdir()
    out = tmp_path / "t"
    argv = [*CIRULLA, "tournament", "--out", str(out), "--seed", "3", "--target", "11"]
    argv += ["--bot", f"peek=cmd:{{python}} {script} {pids}", "--bot", "random"]
    argv += ["--games", "2", "--concurrency", "1"]
    runner = subprocess.Popen(
        tied_to_this_process(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 90
        while not any(pids.glob("*.pid")) and time.monotonic() < deadline:
            assert runner.poll() is None, runner.communicate()[0].decode()
            time.sleep(0.05)
        (pid_file,) = pids.glob("*.pid")
        pid = int(pid_file.stem)
        env = environment_of(pid)
        token = env["CIRULLA_TOKEN"]
        assert len(token) >= 16 and env["CIRULLA_MATCH"] and env["CIRULLA_SERVER"]
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
        assert str(script).encode() in own  # it is the bot's command line that is read
        assert token.encode() not in own
        # nor anywhere else: runner, server, the kept-alive random bot, any process
        leaks = [p for p, line in every_command_line().items() if token.encode() in line]
        assert leaks == []
        (pids / "go").write_text("")
        output, _ = runner.communicate(timeout=120)
    finally:
        (pids / "go").write_text("")
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 0, output.decode()
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2
    for game in games:  # the bot found its seat from the environment and played it out
        seat = game["seats"].index("peek")
        assert game["seat_outcomes"][seat] not in ("crash", "timeout", "disconnect")


def test_a_spec_with_the_token_placeholder_is_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    out = tmp_path / "t"
    argv = [*CIRULLA, "tournament", "--out", str(out), "--bot", "random"]
    argv += ["--bot", "mine=cmd:{python} my_bot.py --token {token}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "{token}" in line and "CIRULLA_TOKEN" in line
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_resume_refuses_a_saved_spec_with_the_token_placeholder(tmp_path: Path) -> None:
    """A tournament saved before the placeholder was retired cannot start its bots."""
    from cirulla.clients.matches.journal import save_settings
    from cirulla.clients.tournament.runner import Settings

    out = tmp_path / "t"
    out.mkdir()
    # saved by an older version: BotSpec.parse would refuse it now
    retired = BotSpec("cmd:engine --token={token}", "cmd", command="engine --token={token}")
    bots = {"a": BotSpec.parse("random"), "b": retired}
    save_settings(out, Settings(bots=bots, players=2, format="round-robin", games=2, seed=1))
    done = subprocess.run(
        [*CIRULLA, "tournament", "--resume", str(out)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "{token}" in done.stderr and "CIRULLA_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (out / "games.jsonl").exists()


def test_ladder_refuses_a_bot_spec_with_the_token_placeholder(tmp_path: Path) -> None:
    from cirulla.ladder.db import open_database
    from cirulla.ladder.store import LadderError, LadderStore

    store = LadderStore(open_database(f"sqlite:///{tmp_path / 'ladder.sqlite3'}"))
    with pytest.raises(LadderError) as refused:
        store.add_bot("mine", "cmd:engine --token {token}")
    assert "{token}" in str(refused.value) and "CIRULLA_TOKEN" in str(refused.value)
    assert store.add_bot("fine", "cmd:engine --seat {seat}")[1]  # the others still work


def test_built_in_and_text_seats_take_no_token_argument() -> None:
    """`cirulla bot` (built-in kinds, the text-engine bridge) reads $CIRULLA_TOKEN."""
    values = seat_values(
        server="127.0.0.1:5", match="m-1", token="s3cret", seat=0, name="b", seed=1
    )
    for spec in ("greedy", "text:./engine --fast"):
        argv = bot_argv(BotSpec.parse(spec), values)
        assert not any("s3cret" in arg or arg.startswith("--token") for arg in argv), argv


def test_the_runner_gives_its_server_the_admin_token_in_the_environment(tmp_path: Path) -> None:
    """The embedded server of a tournament with an admin token: not in `ps`, yet in force."""
    import grpc

    from cirulla.clients.matches.supervise import LocalServer
    from cirulla.v1 import match_service_pb2, match_service_pb2_grpc

    admin = "adm1n-s3cret-token"
    with LocalServer(tmp_path / "db.sqlite3", tmp_path / "server.log", admin) as local:
        assert local.child is not None
        own = Path(f"/proc/{local.child.pid}/cmdline").read_bytes()
        assert b"server" in own and admin.encode() not in own
        assert [p for p, line in every_command_line().items() if admin.encode() in line] == []
        with grpc.insecure_channel(local.address) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            with pytest.raises(grpc.RpcError) as refused:  # only the admin creates
                stub.CreateMatch(match_service_pb2.CreateMatchRequest(), timeout=10)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            made = stub.CreateMatch(
                match_service_pb2.CreateMatchRequest(),
                timeout=10,
                metadata=(("authorization", f"Bearer {admin}"),),
            )
            assert made.match.match_id


def test_only_named_variables_of_the_runner_reach_a_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CA file and the core choice pass by name; a look-alike secret does not."""
    monkeypatch.setenv("CIRULLA_TLS_CA", "/etc/cirulla/ca.pem")
    monkeypatch.setenv("CIRULLA_CORE", "python")
    monkeypatch.setenv("CIRULLA_TLS_KEY", "/etc/cirulla/server-key.pem")
    monkeypatch.setenv("CIRULLA_CORE_SECRET", "s3cret")
    monkeypatch.setenv("CIRULLA_ADMIN_TOKEN", "s3cret")
    env = program_env()
    assert env["CIRULLA_TLS_CA"] == "/etc/cirulla/ca.pem" and env["CIRULLA_CORE"] == "python"
    assert not {"CIRULLA_TLS_KEY", "CIRULLA_CORE_SECRET", "CIRULLA_ADMIN_TOKEN"} & set(env)
