"""A ladder bot's own limits: ``cirulla ladder add NAME SPEC --memory 256M`` stores them
with the version (migration 0006), the version's matches run under them, and a bot
killed at its limit has the limit named in its failure."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import grpc
import pytest

from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, open_store, wait_for

BALLOON = Path(__file__).parents[1] / "programs" / "hostile.py"


@pytest.mark.slow
def test_ladder_add_limits_are_stored_with_the_version_and_applied(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db)
    try:
        ladder.start()
        ladder.cli("add", "random", "random")
        added = ladder.cli(
            "add", "balloon", f"cmd:{sys.executable} {BALLOON} balloon", "--memory", "256M"
        )
        assert "limits in the sandbox: memory=256M" in added.stdout, added.stdout
        bad = ladder.cli("add", "other", "random", "--memory", "lots", check=False)
        assert bad.returncode == 2 and "--memory" in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        store = open_store(db)
        bot = store.bots.get_bot("balloon")
        assert bot["limits"] == "memory=256M,processes=256,cpu=1,output=16M,tmp=512M"
        # the same spec with other limits is a new version
        again = ladder.cli(
            "add", "balloon", f"cmd:{sys.executable} {BALLOON} balloon", "--limits", "memory=300M"
        )
        assert "version 2" in again.stdout, again.stdout
        ladder.cli("request", "balloon", "random")  # requested games are played first

        def named() -> str:
            failure = str(store.bots.get_bot("balloon")["last_failure"])
            return failure if "killed: memory limit 300 MiB" in failure else ""

        wait_for(named, 240, "the balloon to be killed at its own limit")
    finally:
        ladder.stop()


@pytest.mark.slow
def test_limits_are_in_the_published_api_the_standings_and_the_bot_page(tmp_path: Path) -> None:
    """``AddBotRequest.limits`` sets a version's limits (``ladder add`` sends them there),
    ``LadderBot.limits`` shows them with the defaults filled in, ``standings --all`` and
    the bot's web page show them; a value out of range is one line naming its field."""
    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db, "--http", "127.0.0.1:0")
    try:
        ladder.start()
        # one managed bot per queue (nothing is scheduled) and a connect-in one
        added = ladder.cli(
            "add", "capped", "random", "--memory", "256M", "--processes", "64", "--cpu", "0.5"
        )
        assert "limits in the sandbox: " in added.stdout and "256M/64p/0.5cpu" in added.stdout
        ladder.cli("add", "plain", "random", "--queue", "3p")
        ladder.cli("add", "remote", "connect")
        stub = ladder.stub()
        history = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name="capped"))
        assert history.bot.limits == ladder_pb2.BotLimits(
            memory_bytes=256 * 1024**2,
            processes=64,
            cpu_millicores=500,
            output_bytes=16 * 1024**2,
            tmp_bytes=512 * 1024**2,
        )
        assert history.versions[-1].limits == history.bot.limits
        plain = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name="plain")).bot
        assert (plain.limits.memory_bytes, plain.limits.processes) == (2 * 1024**3, 256)
        assert plain.limits.cpu_millicores == 1000
        remote = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name="remote")).bot
        assert not remote.HasField("limits")

        # by the rpc alone: the field, no metadata
        stub.AddBot(
            ladder_pb2.AddBotRequest(
                bot_name="rpc", spec="random", limits=ladder_pb2.BotLimits(processes=32)
            ),
            metadata=ladder.admin(),
        )
        assert open_store(db).bots.get_bot("rpc")["limits"].startswith("memory=2G,processes=32,")
        for limits, field in (
            (ladder_pb2.BotLimits(processes=100_000), "limits.processes"),
            (ladder_pb2.BotLimits(memory_bytes=1024), "limits.memory_bytes"),
            (ladder_pb2.BotLimits(cpu_millicores=5), "limits.cpu_millicores"),
        ):
            with pytest.raises(grpc.RpcError) as refused:
                stub.AddBot(
                    ladder_pb2.AddBotRequest(bot_name="bad", spec="random", limits=limits),
                    metadata=ladder.admin(),
                )
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            details = str(refused.value.details())
            assert details.startswith(field + ":") and "\n" not in details, details
        with pytest.raises(grpc.RpcError) as refused:
            stub.AddBot(
                ladder_pb2.AddBotRequest(
                    bot_name="bad", spec="connect", limits=ladder_pb2.BotLimits(processes=8)
                ),
                metadata=ladder.admin(),
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        bad = ladder.cli("add", "bad", "random", "--processes", "100000", check=False)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
        assert "--processes" in bad.stderr and "Traceback" not in bad.stderr

        shown = ladder.cli("standings", "--all").stdout
        row = next(line for line in shown.splitlines() if "capped" in line)
        assert "256M/64p/0.5cpu" in row, shown
        assert "limits" in shown
        assert "2G/256p/1cpu" in ladder.cli("standings", "--all", "--queue", "3p").stdout

        state = json.loads((ladder.folder / "cirulla-ladder.json").read_text())
        with urllib.request.urlopen(f"http://{state['http']}/ladder/bots/capped") as page:
            html = page.read().decode()
        assert (
            '<span id="botlimits">memory 256 MiB, 64 processes and threads, 0.5 cores, '
            "output 16 MiB, /tmp 512 MiB</span>"
        ) in html
    finally:
        ladder.stop()
