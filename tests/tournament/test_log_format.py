"""Issue 25 item 7: one option vocabulary and one log format.

Every process logs logfmt (``cirulla.logs``): the lines of a real server's log and of
real bots' logs (a built-in kind kept alive, a text engine through its bridge) parse as
logfmt, with the same leading keys. ``--log-level`` takes any case everywhere and shows
lower case; ``ladder serve`` takes ``--move-limit`` like ``tournament`` (its former
``--move-limit-ms`` still works, unlisted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.cli import areas_for, build_parser

ENGINE = Path(__file__).parents[1] / "programs" / "counting_engine.py"

#: One logfmt pair (go-logfmt's grammar): a key of printable non-space characters
#: without ``=`` or ``"``, then nothing, ``=`` and a bare value, or ``=`` and a quoted one.
PAIR = re.compile(r'([^\s="]+)(?:=("(?:[^"\\]|\\.)*"|[^\s"]*))?')


def unescape(found: re.Match[str]) -> str:
    code = found.group(1)
    if code.startswith("x") and len(code) == 3:
        return chr(int(code[1:], 16))
    return {"n": "\n", "r": "\r", "t": "\t"}.get(code, code)


def logfmt(line: str) -> dict[str, str]:
    """Parse one line strictly: every character belongs to a pair or a separating space."""
    pairs: dict[str, str] = {}
    at = 0
    while at < len(line):
        if line[at] == " ":
            at += 1
            continue
        found = PAIR.match(line, at)
        assert found is not None and found.end() > at, f"not logfmt at {at}: {line!r}"
        end = found.end()
        assert end == len(line) or line[end] == " ", f"not logfmt at {end}: {line!r}"
        value = found.group(2) or ""
        if value.startswith('"'):
            value = re.sub(r"\\(x[0-9a-f]{2}|.)", unescape, value[1:-1])
        pairs.setdefault(found.group(1), value)
        at = end
    return pairs


def check_log(path: Path, proc: str) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    assert lines, path
    parsed = [logfmt(line) for line in lines]
    for pairs, line in zip(parsed, lines, strict=True):
        assert list(pairs)[:4] == ["ts", "level", "proc", "logger"], line
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", pairs["ts"]), line
        assert pairs["level"] in ("debug", "info", "warning", "error"), line
        assert pairs["proc"] == proc, line
    return parsed


def test_the_server_and_the_bots_log_the_same_logfmt(tmp_path: Path) -> None:
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out)]
    argv += ["--bot", "greedy", "--bot", f"eng=text:{{python}} {ENGINE}", "--games", "2"]
    argv += ["--target", "11", "--seed", "6", "--bot-seed", "6", "--concurrency", "1"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    server = check_log(out / "logs" / "server.log", "server")
    assert any("match_created" in p and p.get("match", "").startswith("m-") for p in server)
    greedy = check_log(out / "logs" / "greedy-1.log", "greedy")
    assert any(p.get("msg", "").startswith("joined match m-") for p in greedy)
    engine = check_log(out / "logs" / "eng-1.log", "eng")
    assert any("speaks text protocol" in p.get("msg", "") for p in engine)


def test_a_bots_log_line_holds_whatever_an_engine_writes(tmp_path: Path) -> None:
    """A message with quotes, backslashes, newlines and escape codes stays one line."""
    import logging

    from cirulla.logs import setup_logging

    path = tmp_path / "log"
    with path.open("w") as stream:
        setup_logging("info", "my bot", logger="cirulla.test", stream=stream)
        logging.getLogger("cirulla.test").warning('engine: "x=1"\\ \nnext\x1b[2J')
        logging.getLogger("cirulla.test").info('event_name key=v other="a b"')
    first, second = (logfmt(line) for line in path.read_text().splitlines())
    assert first["proc"] == "my bot" and first["msg"] == 'engine: "x=1"\\ \nnext\x1b[2J'
    assert "\x1b" not in path.read_text()
    assert second["event_name"] == "" and second["key"] == "v" and second["other"] == "a b"


@pytest.mark.parametrize(
    "command",
    [["server"], ["bot", "random"], ["ladder", "serve"], ["ladder", "worker"]],
)
def test_log_level_takes_any_case_and_shows_lower_case(command: list[str]) -> None:
    parser = build_parser(areas_for(command))
    extra = ["--db", "postgresql://x@127.0.0.1:1/x"] if command == ["ladder", "worker"] else []
    for given in ("DEBUG", "debug", "Warning"):
        args = parser.parse_args([*command, *extra, "--log-level", given])
        assert args.log_level == given.lower()
    help_text = subprocess.run(
        [sys.executable, "-m", "cirulla", *command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "{debug,info,warning,error}" in help_text and "DEBUG" not in help_text


def test_ladder_serve_takes_the_tournaments_move_limit_and_its_old_name() -> None:
    parser = build_parser(areas_for(["ladder"]))
    assert parser.parse_args(["ladder", "serve", "--move-limit", "700"]).move_limit_ms == 700
    assert parser.parse_args(["ladder", "serve", "--move-limit-ms", "800"]).move_limit_ms == 800
    assert parser.parse_args(["ladder", "serve"]).move_limit_ms == 10_000
    shown = subprocess.run(
        [sys.executable, "-m", "cirulla", "ladder", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "--move-limit MS" in shown and "--move-limit-ms" not in shown
    tournament = subprocess.run(
        [sys.executable, "-m", "cirulla", "tournament", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "--move-limit MS" in tournament


@pytest.mark.slow
def test_the_ladder_says_2p_and_won_by_forfeit(tmp_path: Path) -> None:
    """A real ladder (the harness passes the former --move-limit-ms): a bot that crashes
    at start loses by forfeit, which the match and history commands say in words, with
    the queue as 2p (not LADDER_QUEUE_TWO_PLAYERS); its server logs logfmt too."""
    from cirulla.v1 import ladder_pb2
    from tests.ladder_harness import LadderProcess, wait_for

    ladder = LadderProcess(tmp_path / "ladder", f"sqlite:///{tmp_path / 'ladder.sqlite3'}")
    ladder.start()
    try:
        ladder.cli("add", "greedy", "greedy")
        ladder.cli("add", "crasher", f"cmd:{sys.executable} -c 'raise SystemExit(1)'")
        stub = ladder.stub()

        def forfeited() -> ladder_pb2.LadderMatch | None:
            history = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name="crasher"))
            for m in history.matches:
                done = m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED
                if done and not m.withheld and m.HasField("winner_side"):
                    return m
            return None

        match = wait_for(forfeited, 240, "a finished match of the crasher")
        shown = ladder.cli("match", match.match_id).stdout
        assert f"{match.match_id} (2p)" in shown, shown
        assert "greedy won by forfeit (crasher: " in shown, shown
        assert "LADDER_QUEUE" not in shown and "won 0-0" not in shown
        history = ladder.cli("history", "greedy").stdout
        assert "won by forfeit" in history and "LADDER_QUEUE" not in history, history
        assert "2p: rating" in history, history
        # piped, the table keeps whole values (issue 25 item 5): the id on one line
        assert any(match.match_id in line for line in history.splitlines()), history
    finally:
        assert ladder.stop() == 0, ladder.log.read_text()[-3000:]
    for line in ladder.log.read_text().splitlines():
        if line.startswith("ts="):
            assert logfmt(line)["proc"] == "ladder", line


def test_every_log_setup_goes_through_cirulla_logs() -> None:
    """No process sets up logging by itself (basicConfig, a Formatter of its own): each
    goes through cirulla.logs, so the format stays one."""
    root = Path(__file__).resolve().parents[2]
    found = [
        f"{path.relative_to(root)}:{n}"
        for area in ("src", "rules", "server", "bots", "clients", "ladder", "env")
        for path in sorted((root / area).rglob("*.py"))
        if path != root / "src" / "cirulla" / "logs.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"basicConfig|logging\.Formatter|%\(asctime\)", line)
    ]
    assert found == [], found
