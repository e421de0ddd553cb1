"""The bot kit as a newcomer meets it: commands run as subprocesses against a real server.

`cirulla match create` prints a match and its tokens; bots take their connection from
CIRULLA_* variables (no arguments), log by default, say they wait for the other players
and give up after the join timeout; TLS with a CA file; a policy that overruns is told to
stop; one protocol-version rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cirulla.clients.matches.supervise import LocalServer
from cirulla.version import protocol_compatible
from tests.server.test_tls import self_signed
from tests.server_harness import server_command

CIRULLA = [sys.executable, "-m", "cirulla"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("kit-server")
    with LocalServer(tmp / "server.sqlite3", tmp / "server.log") as local:
        yield local.address


def cirulla(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CIRULLA, *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def create(server: str, *extra: str) -> tuple[str, list[str]]:
    done = cirulla("match", "create", f"--server={server}", "--json", *extra)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return data["match_id"], data["tokens"]


def seat_env(server: str, match_id: str, token: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIRULLA_")}
    env.update(CIRULLA_SERVER=server, CIRULLA_MATCH=match_id, CIRULLA_TOKEN=token, **extra)
    return env


def start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    return subprocess.Popen(argv, env=env, stdout=handle, stderr=subprocess.STDOUT)


def test_match_create_prints_the_match_and_tokens_that_cannot_look_like_options(
    server: str,
) -> None:
    done = cirulla("match", "create", f"--server={server}", "--players", "3", "--target", "11")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("match m-") and "3 seats" in lines[0]
    tokens = [line.split()[-1] for line in lines if line.startswith("seat ")]
    assert len(tokens) == 3
    assert "CIRULLA_TOKEN=" + tokens[2] in done.stdout  # the commands to play each seat
    # and how a bot of one's own takes a seat: a newcomer's next question
    assert lines[-1].startswith("or your own bot with the same variables: python my_bot.py")
    assert "cirulla bot text -- ./my-engine" in lines[-1]
    # 24 more tokens, four a match: as many as twelve 2-seat matches gave, in half the
    # commands (each is a Python start)
    many = [create(server, "--players", "4")[1] for _ in range(6)]
    for token in [t for seats in many for t in seats] + tokens:
        assert token.isalnum() and len(token) == 48  # 192 bits of hex: never "-..."
    bad = cirulla(
        "match", "create", f"--server={server}", "--preset", "fantacarte", "--players", "3"
    )
    assert bad.returncode == 2 and "fantacarte" in bad.stderr and "Traceback" not in bad.stderr


def test_bots_play_from_the_environment_alone_and_say_they_wait(
    server: str, tmp_path: Path
) -> None:
    match_id, tokens = create(server, "--target", "21")
    # the documented example bot, run as a file with no arguments at all
    first = start(
        [sys.executable, str(ROOT / "examples" / "example_bot.py")],
        seat_env(server, match_id, tokens[0]),
        tmp_path / "example.log",
    )
    # alone in the match: it must say it waits for the others (2 s after joining)
    deadline = time.monotonic() + 60
    while "waiting for the other players" not in (tmp_path / "example.log").read_text():
        assert time.monotonic() < deadline and first.poll() is None, (
            tmp_path / "example.log"
        ).read_text()
        time.sleep(0.05)
    second = start(
        [*CIRULLA, "bot", "greedy"], seat_env(server, match_id, tokens[1]), tmp_path / "greedy.log"
    )
    assert first.wait(120) == 0, (tmp_path / "example.log").read_text()
    assert second.wait(120) == 0, (tmp_path / "greedy.log").read_text()
    example_log = (tmp_path / "example.log").read_text()
    # the kit logged by default, though the example never configures logging
    assert f"joined match {match_id} as seat 0" in example_log
    assert "waiting for the other players (1 of 2 seats" in example_log
    assert "match over" in (tmp_path / "greedy.log").read_text()
    status = cirulla("match", "create", "--help")
    assert "--preset" in status.stdout and "--rule" in status.stdout


def test_token_equals_form_and_missing_connection_are_clear(server: str) -> None:
    match_id, _ = create(server)
    # a token starting with "-" is a value, not an option, in the --token=VALUE form
    done = cirulla(
        "bot",
        "random",
        f"--server={server}",
        f"--match={match_id}",
        "--token=-not-a-token",
        "--retries=0",
    )
    assert done.returncode == 1, done.stderr
    assert "UNAUTHENTICATED" in done.stderr and "Traceback" not in done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIRULLA_")}
    done = cirulla("bot", "greedy", f"--match={match_id}", env=env)
    assert done.returncode == 1
    assert "--server (or $CIRULLA_SERVER)" in done.stderr
    assert "--token (or $CIRULLA_TOKEN)" in done.stderr and "Traceback" not in done.stderr


def test_a_bot_alone_gives_up_after_the_join_timeout(server: str) -> None:
    match_id, tokens = create(server)
    done = cirulla(
        "bot", "random", "--join-timeout", "1.5", env=seat_env(server, match_id, tokens[0])
    )
    assert done.returncode == 1, done.stderr
    assert "no game started within 1.5s of joining" in done.stderr


def test_tls_from_a_ca_file_in_the_environment(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    port_file = tmp_path / "port"
    srv = subprocess.Popen(
        server_command(
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(port_file),
            "--db",
            str(tmp_path / "tls.sqlite3"),
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert time.monotonic() < deadline and srv.poll() is None
            time.sleep(0.05)
        address = f"127.0.0.1:{port_file.read_text().strip()}"
        plain = cirulla("match", "create", f"--server={address}", "--timeout", "3")
        assert plain.returncode == 1 and "UNAVAILABLE" in plain.stderr
        match_id, tokens = create(address, f"--tls-ca={cert}", "--target", "11")
        bots = [
            start(
                [*CIRULLA, "bot", kind],
                seat_env(address, match_id, token, CIRULLA_TLS_CA=str(cert)),
                tmp_path / f"{kind}.log",
            )
            for kind, token in zip(("random", "greedy"), tokens, strict=True)
        ]
        for bot, kind in zip(bots, ("random", "greedy"), strict=True):
            assert bot.wait(120) == 0, (tmp_path / f"{kind}.log").read_text()
    finally:
        srv.terminate()
        srv.wait(10)


# It overruns its first two decisions (each one costs the whole move clock), then answers
# at once: two overruns show it is told to stop, and the rest of the deal plays quickly.
SLOW_BOT = """
import logging, time
from cirulla.bots.kit import run_bot
from cirulla.bots.policy import decision_cancelled

log = logging.getLogger("slow")
overruns = 0

def decide(view, legal, time_left):
    global overruns
    overruns += 1
    if overruns > 2:
        return 0
    start = time.monotonic()
    while not decision_cancelled():  # a search that would never end by itself
        time.sleep(0.01)
        if time.monotonic() - start > 10:
            log.error("never told to stop")
            return 0
    log.info("told to stop after %.1fs", time.monotonic() - start)
    return 0

run_bot(decide, name="slow")
"""


def script_against(
    server: str, tmp_path: Path, source: str, opponent: str, *create_args: str
) -> tuple[Path, str]:
    """A match on ``server`` between the bot script ``source`` (seat 0) and the built-in
    ``opponent``, both played to the end; the script's path and its log."""
    match_id, tokens = create(server, *create_args)
    script = tmp_path / "script_bot.py"
    script.write_text(textwrap.dedent(source))
    log = tmp_path / "script.log"
    mine = start([sys.executable, str(script)], seat_env(server, match_id, tokens[0]), log)
    other = start(
        [*CIRULLA, "bot", opponent], seat_env(server, match_id, tokens[1]), tmp_path / "o.log"
    )
    assert other.wait(180) == 0
    assert mine.wait(60) == 0  # played to the end (on default actions where it failed)
    return script, log.read_text()


def test_an_overrunning_policy_is_told_to_stop(server: str, tmp_path: Path) -> None:
    _, log = script_against(
        server, tmp_path, SLOW_BOT, "random", "--move-limit", "400", "--target", "1"
    )
    assert "told to stop after" in log and "never told to stop" not in log
    assert "overran its" in log


BUGGY_BOT = """
from cirulla.bots.kit import run_bot


def decide(view, legal, time_left):
    return len(legal) // 0  # the bug


run_bot(decide, name="buggy")
"""


def test_a_failing_policy_logs_its_first_traceback_then_one_line_each(
    server: str, tmp_path: Path
) -> None:
    """A bot whose decision function raises plays on with the default action, and its log
    shows where: the first failure with its traceback (the bot's file and line), the others
    in one line each (docs/bots.md, "The kit API"). It was only `the policy failed
    (ZeroDivisionError: division by zero)`, with no line to look at."""
    script, log = script_against(server, tmp_path, BUGGY_BOT, "greedy", "--target", "1")
    failures = [
        line
        for line in log.splitlines()
        if "the policy failed (ZeroDivisionError('integer division or modulo by zero'))" in line
    ]
    assert len(failures) > 1
    assert "Traceback (most recent call last)" in failures[0]
    assert f'File \\"{script}\\", line 6, in decide' in failures[0], failures[0]
    assert not any("Traceback" in line for line in failures[1:])


THREAD_BOT = """
import sys, threading
from cirulla.bots.kit import run_bot
from cirulla.bots.simple import RandomPolicy

class Probe(RandomPolicy):
    instant = sys.argv[1] == "instant"
    name = "probe"
    threads = set()

    def choose(self, view, legal, time_left):
        Probe.threads.add(threading.current_thread().name)
        return super().choose(view, legal, time_left)

run_bot(Probe(seed=1))
print("decided in", sorted(Probe.threads))
"""


@pytest.mark.parametrize("instant", [True, False])
def test_instant_policies_decide_inline_even_against_a_clock(
    server: str, tmp_path: Path, instant: bool
) -> None:
    """Random and greedy say they are ``instant``: the kit does not hand their decisions
    to a worker thread (which costs more than the decision), other policies keep the
    thread that lets the kit answer in time if they overrun."""
    match_id, tokens = create(server, "--move-limit", "5000", "--target", "1")
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent(THREAD_BOT))
    arg = "instant" if instant else "threaded"
    probe = subprocess.Popen(
        [sys.executable, str(script), arg],
        env=seat_env(server, match_id, tokens[0]),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    other = start(
        [*CIRULLA, "bot", "greedy"], seat_env(server, match_id, tokens[1]), tmp_path / "g.log"
    )
    out, _ = probe.communicate(timeout=120)
    assert other.wait(60) == 0 and probe.returncode == 0
    expected = "['MainThread']" if instant else "['bot-decision']"
    assert f"decided in {expected}" in out


def test_one_protocol_version_rule_for_kit_and_server() -> None:
    assert protocol_compatible("cirulla.v1/1")
    assert protocol_compatible("cirulla.v1/7")  # minor versions only add
    assert not protocol_compatible("cirulla.v2/1")
    assert not protocol_compatible("")
