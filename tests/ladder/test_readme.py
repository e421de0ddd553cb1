"""The README's "Run a ladder" commands, run as written (only the port is a free one, and
the five-minute sleep becomes a wait for every bot's first rated games)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
DEFAULT_ADDRESS = "127.0.0.1:50061"


def section_commands() -> list[str]:
    """The shell lines of the first two code blocks of "## Run a ladder"."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Run a ladder", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    lines = []
    for block in blocks[:2]:
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line:
                lines.append(line)
    return lines


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cirulla(argv: list[str]) -> list[str]:
    assert argv[0] == "cirulla", argv
    return [sys.executable, "-m", "cirulla", *argv[1:]]


@pytest.mark.slow
def test_run_a_ladder_section_works(tmp_path: Path) -> None:
    lines = section_commands()
    assert lines[0].startswith("cirulla ladder serve"), lines
    assert lines[-1].startswith("sleep 300; cirulla ladder standings"), lines
    address = f"127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "CIRULLA_BOT_KEY"}
    procs: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], log: str, extra: dict[str, str] | None = None) -> None:
        with (tmp_path / log).open("wb") as out:
            procs.append(
                subprocess.Popen(
                    argv,
                    cwd=tmp_path,
                    env={**env, **(extra or {})},
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    def run(argv: list[str]) -> str:
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    try:
        start(cirulla([*shlex.split(lines[0]), "--listen", address]), "serve.log")
        deadline = time.monotonic() + 90
        while not (tmp_path / "cirulla-ladder.json").exists():
            assert procs[0].poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "the ladder did not start"
            time.sleep(0.2)
        key = ""
        for line in lines[1:-1]:
            line = line.replace(DEFAULT_ADDRESS, address)
            if line.startswith("CIRULLA_BOT_KEY=<key> "):
                argv = shlex.split(line.removeprefix("CIRULLA_BOT_KEY=<key> ").rstrip("&"))
                assert key, "the connect-in bot's key was printed by `ladder add ... connect`"
                start(cirulla(argv), "mine.log", {"CIRULLA_BOT_KEY": key})
                continue
            out = run(cirulla(shlex.split(line)))
            if line.endswith(" connect"):
                assert "bot key (shown once" in out, out
                key = out.strip().splitlines()[-1]
        standings = ""
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            standings = run(cirulla(shlex.split(lines[-1].removeprefix("sleep 300; "))))
            rows = [
                r for r in standings.splitlines() if re.search(r"\b(random|greedy|mcts|mine)\b", r)
            ]
            if len(rows) == 4 and "validating" not in standings:
                break
            time.sleep(2)
        for name in ("random", "greedy", "mcts", "mine"):
            assert name in standings, standings
        assert "validating" not in standings, standings  # every bot played its first games
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert procs[0].returncode == 0, (tmp_path / "serve.log").read_text()[-2000:]
