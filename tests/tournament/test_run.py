"""End-to-end tournaments: a real server subprocess and one real process per bot seat.

Budgets are tiny (random and greedy, target 11, 2-4 games) so each run takes seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.cli import main
from cirulla.clients.matches.supervise import LIVE, LocalServer
from cirulla.server.store import Store
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc
from tests.server_harness import tied_to_this_process

# A seat that joins and answers every decision with an illegal action (its first legal
# card capturing a card that is not on the table): the server rejects each answer, the
# move clock runs out and the seat's side forfeits.
GARBAGE_BOT = """
import os, queue
import grpc
from cirulla.version import PROTOCOL_VERSION
from cirulla.rules import CARD_NAMES
from cirulla.v1 import match_service_pb2 as ms, match_service_pb2_grpc as grpc_ms, play_pb2

server, match, token = (os.environ[f"CIRULLA_{k}"] for k in ("SERVER", "MATCH", "TOKEN"))
outbox = queue.Queue()
outbox.put(ms.PlayRequest(hello=play_pb2.Hello(
    protocol_version=PROTOCOL_VERSION, name="garbage", match_id=match, seat_token=token)))

def requests():
    while True:
        item = outbox.get()
        if item is None:
            return
        yield item

def illegal(request):
    seen = {c.code for c in request.view.hand} | {c.code for c in request.view.table}
    card = request.legal_actions[0].action.card.code
    absent = next(name for name in CARD_NAMES if name not in seen)
    return f"{card}:{absent}"

notation = ""
stub = grpc_ms.MatchServiceStub(grpc.insecure_channel(server))
for response in stub.Play(requests()):
    kind = response.WhichOneof("body")
    if kind == "decision_request":
        notation = illegal(response.decision_request)
        outbox.put(ms.PlayRequest(submit_action=play_pb2.SubmitAction(
            decision_id=response.decision_request.decision_id, notation=notation)))
    elif kind == "action_rejected" and response.action_rejected.open_decision_id:
        outbox.put(ms.PlayRequest(submit_action=play_pb2.SubmitAction(
            decision_id=response.action_rejected.open_decision_id, notation=notation)))
    elif kind == "goodbye":
        break
outbox.put(None)
"""

# A seat that joins, then walks away (exit code 0) at its first decision: the server
# counts the dropped stream, its grace period runs out and its side forfeits.
QUITTER_BOT = """
import os
import grpc
from cirulla.version import PROTOCOL_VERSION
from cirulla.v1 import match_service_pb2 as ms, match_service_pb2_grpc as grpc_ms, play_pb2

server, match, token = (os.environ[f"CIRULLA_{k}"] for k in ("SERVER", "MATCH", "TOKEN"))
hello = ms.PlayRequest(hello=play_pb2.Hello(
    protocol_version=PROTOCOL_VERSION, name="quitter", match_id=match, seat_token=token))
channel = grpc.insecure_channel(server)
stream = grpc_ms.MatchServiceStub(channel).Play(iter([hello]))
for response in stream:
    if response.WhichOneof("body") in ("decision_request", "goodbye"):
        break
stream.cancel()
channel.close()
"""


def run(out: Path, *args: str) -> int:
    return main(["tournament", "--out", str(out), "--seed", "5", "--target", "11", *args])


def journal(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def journal_lines(out: Path) -> int:
    path = out / "games.jsonl"
    return path.read_text().count("\n") if path.exists() else 0


def results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text())


def bot_line(out: Path, name: str) -> dict[str, Any]:
    return next(b for b in results(out)["standings"]["bots"] if b["bot"] == name)


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Any:
    yield
    assert not LIVE._children, "a server or bot process was left running"


def test_random_vs_greedy_duplicate_pair(tmp_path: Path) -> None:
    out = tmp_path / "t"
    assert run(out, "--bot", "random", "--bot", "greedy", "--games", "2") == 0
    games = journal(out)
    assert sorted(g["index"] for g in games) == [0, 1]
    first, second = sorted(games, key=lambda g: g["index"])
    assert first["seats"] == ["random", "greedy"] and second["seats"] == ["greedy", "random"]
    assert first["seed"] == second["seed"]  # same cards, seats swapped
    for game in games:
        assert game["seat_outcomes"] == ["ok", "ok"]
        assert game["winner"] in (0, 1)
        assert max(game["totals"]) >= 11 and game["deals"] >= 1
        record = json.loads((out / "records" / f"{game['match_id']}.json").read_text())
        assert record["match_id"] == game["match_id"]
        assert record["deals"] and record["deals"][0]["decks"]
        assert record["seats"][0]["seat"] == 0 and record["seats"][0]["side"] == 0
        record_file = out / "records" / f"{game['match_id']}.json"
        checked = subprocess.run(
            [sys.executable, "-m", "cirulla", "replay", str(record_file)],
            capture_output=True,
            text=True,
        )
        assert checked.returncode == 0 and ": OK;" in checked.stdout, checked.stdout
        text = record_file.with_suffix(".txt").read_text()
        assert text.startswith('[Record "') and "Result: side " in text
    assert '"inf"' not in (out / "results.json").read_text()  # JSON has no infinity: null
    # Built-in bots are kept alive between games: one process per bot here (concurrency
    # 2, but the two games of a duplicate pair may reuse the first pair's processes).
    for bot in ("random", "greedy"):
        logs = sorted((out / "logs").glob(f"{bot}-*.log"))
        assert 1 <= len(logs) <= 2
        text = "".join(log.read_text() for log in logs)
        for game in games:
            if bot in game["seats"]:
                assert f"match {game['match_id']}" in text
    doc = results(out)
    assert doc["settings"]["bots"] == {"random": "random", "greedy": "greedy"}
    assert {b["bot"]: b["games"] for b in doc["standings"]["bots"]} == {"random": 2, "greedy": 2}
    assert sum(b["wins"] for b in doc["standings"]["bots"]) == 2
    (h2h,) = doc["standings"]["head_to_head"]
    assert h2h["wins"] + h2h["losses"] == 2
    assert (out / "server.sqlite3").exists()


def test_crashing_bot_loses_and_the_tournament_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "t"
    crash = f"crash=cmd:{sys.executable} -c 'import sys; sys.exit(1)' {{server}}"
    # a bot that joined none of its games fails the run, however short (issue 40, item 5)
    assert run(out, "--bot", crash, "--bot", "random", "--games", "2") == 1
    games = journal(out)
    assert len(games) == 2
    for game in games:
        seat = game["seats"].index("crash")
        assert game["seat_outcomes"][seat] == "crash"
        assert game["winner"] == 1 - seat
        assert any("exited with code 1" in note for note in game["notes"])
    crash_line = bot_line(out, "crash")
    assert (crash_line["wins"], crash_line["losses"]) == (0, 2)
    assert crash_line["problems"] == {"crash": 2}
    assert bot_line(out, "random")["wins"] == 2


def test_a_script_that_is_not_executable_says_what_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer's ``cmd:./engine.pl`` without its executable bit: each game's note and
    the run's last words say what to do, and the end shows the seat's own log (it said
    "(no log)": the log of a cmd: seat that never started was not kept)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engine.pl").write_text("#!/usr/bin/perl\nprint 1;\n")  # mode 0644
    out = tmp_path / "t"
    assert run(out, "--bot", "p=cmd:./engine.pl", "--bot", "random", "--games", "2") == 1
    hint = "(make it executable, chmod +x ./engine.pl, or name its interpreter first)"
    for game in journal(out):
        seat = game["seats"].index("p")
        assert game["seat_outcomes"][seat] == "crash"
        assert any("Permission denied" in n and hint in n for n in game["notes"]), game
        assert game["logs"][seat], game  # its log is named in the journal
    err = capsys.readouterr()
    said = err.out + err.err
    assert "bot p joined none of its 2 games" in said, said
    assert "(no log)" not in said, said
    assert said.count(hint) >= 3, said  # two games' notes and the log's tail at the end


def test_a_bot_that_never_joins_gets_its_match_aborted_on_the_server(tmp_path: Path) -> None:
    server = LocalServer(tmp_path / "db.sqlite3", tmp_path / "server.log", admin_token="s3cret")
    with server:
        out = tmp_path / "t"
        crash = f"crash=cmd:{sys.executable} -c 'import sys; sys.exit(3)' {{server}}"
        args = ("--server", server.address, "--admin-token", "s3cret")
        # it joined none of its games: the run fails (issue 40, item 5)
        assert run(out, *args, "--bot", crash, "--bot", "random", "--games", "2") == 1
        games = journal(out)
        assert len(games) == 2
        with grpc.insecure_channel(server.address) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            for game in games:
                seat = game["seats"].index("crash")
                assert game["seat_outcomes"][seat] == "crash"
                assert not any("not aborted" in note for note in game["notes"])
                request = match_service_pb2.GetMatchRequest(match_id=game["match_id"])
                match = stub.GetMatch(request, timeout=10).match
                assert match.status == match_pb2.MATCH_STATUS_ABORTED
                assert f"seat {seat} exited without joining" in match.abort_reason


def test_bot_sending_illegal_actions_forfeits_on_its_clock(tmp_path: Path) -> None:
    out = tmp_path / "t"
    script = tmp_path / "garbage_bot.py"
    script.write_text(GARBAGE_BOT)
    spec = f"garbage=cmd:{sys.executable} {script}"
    assert run(out, "--bot", spec, "--bot", "greedy", "--games", "2", "--move-limit", "800") == 0
    games = journal(out)
    assert len(games) == 2
    for game in games:
        seat = game["seats"].index("garbage")
        assert game["seat_outcomes"][seat] == "illegal"
        assert any("illegal actions" in note for note in game["notes"])
        assert game["winner"] == 1 - seat
        # its record file says so too (its seat's counts as the game ended)
        record = json.loads((out / "records" / f"{game['match_id']}.json").read_text())
        faulty = record["seats"][seat]
        assert (faulty["timeouts"], faulty["forfeits"]) == (1, 1)
        assert faulty["illegal_actions"] >= 1
        assert f"illegal actions: {faulty['illegal_actions']}" in faulty["notes"]
        assert record["seats"][1 - seat]["illegal_actions"] == 0
        text = (out / "records" / f"{game['match_id']}.txt").read_text()
        assert f"[Seat{seat}Notes " in text
    assert bot_line(out, "garbage")["losses"] == 2
    assert bot_line(out, "garbage")["problems"] == {"illegal": 2}
    assert bot_line(out, "greedy")["problems"] == {}


def test_bot_leaving_mid_game_forfeits_as_disconnected(tmp_path: Path) -> None:
    out = tmp_path / "t"
    script = tmp_path / "quitter_bot.py"
    script.write_text(QUITTER_BOT)
    spec = f"quitter=cmd:{sys.executable} {script}"
    assert run(out, "--bot", spec, "--bot", "greedy", "--games", "2") == 0
    games = journal(out)
    assert len(games) == 2
    for game in games:
        seat = game["seats"].index("quitter")
        assert game["seat_outcomes"][seat] == "disconnect"
        assert game["winner"] == 1 - seat
        assert not any("exited with code" in note for note in game["notes"])
    assert bot_line(out, "quitter")["problems"] == {"disconnect": 2}


def test_resume_plays_only_the_missing_games(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t"
    assert run(out, "--bot", "random", "--bot", "greedy", "--games", "4", "--max-games", "2") == 0
    before = journal(out)
    assert len(before) == 2
    # fewer games than the run has: one line, nothing played or saved (it was ignored)
    saved = (out / "tournament.json").read_text()
    capsys.readouterr()
    assert main(["tournament", "--resume", str(out), "--games", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--games 3: the run has 4; it can only grow" in err, err
    assert (out / "tournament.json").read_text() == saved and journal(out) == before
    assert main(["tournament", "--resume", str(out)]) == 0
    after = journal(out)
    assert after[:2] == before  # the journal is only appended to
    assert sorted(g["index"] for g in after) == [0, 1, 2, 3]
    assert len({g["match_id"] for g in after}) == 4  # nothing replayed
    assert results(out)["finished_games"] == 4
    # nothing left: a further resume plays no game
    assert main(["tournament", "--resume", str(out)]) == 0
    assert len(journal(out)) == 4


def test_resume_refuses_schedule_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t"
    assert main(["tournament", "--resume", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    out.mkdir()
    (out / "tournament.json").write_text(json.dumps({"bots": {"a": "random", "b": "greedy"}}))
    assert main(["tournament", "--resume", str(out), "--bot", "random"]) == 2
    assert "drop --bot" in capsys.readouterr().err
    assert not (out / "games.jsonl").exists()


def test_hung_bot_that_never_joins_loses_at_the_wall_clock_limit(tmp_path: Path) -> None:
    out = tmp_path / "t"
    hang = f"hang=cmd:{sys.executable} -c 'import time; time.sleep(600)'"
    args = ("--bot", hang, "--bot", "random", "--games", "2", "--game-timeout", "3")
    assert run(out, *args) == 1  # it joined none of its games: the run fails (issue 40, 5)
    games = journal(out)
    assert len(games) == 2
    for game in games:
        seat = game["seats"].index("hang")
        assert game["seat_outcomes"][seat] == "timeout"
        assert game["winner"] == 1 - seat
        assert any("wall-clock limit" in note for note in game["notes"])
    assert bot_line(out, "hang")["problems"] == {"timeout": 2}
    # The runner aborted the matches on the server: none is left waiting in its database.
    store = Store(out / "server.sqlite3")
    try:
        stored = [store.get_match(game["match_id"]) for game in games]
    finally:
        store.close()
    for match in stored:
        assert match is not None and match["status"] == "aborted"
        assert "wall-clock limit of 3s" in match["abort_reason"]


def processes_mentioning(texts: list[str]) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if any(t in cmdline for t in texts) and "pytest" not in cmdline:
            found.append(cmdline)
    return found


def processes_holding(folder: Path) -> list[str]:
    """Processes with a file under ``folder`` open (a bot's log is its stderr)."""
    found = []
    prefix = str(folder.resolve())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            targets = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            continue
        if any(t.startswith(prefix) for t in targets):
            found.append(proc.name)
    return found


def test_sigterm_stops_bots_and_server_and_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out), "--seed", "2"]
    argv += ["--bot", "random", "--bot", "greedy", "--games", "8", "--concurrency", "1"]
    proc = subprocess.Popen(
        tied_to_this_process(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 60
        # a whole line, not just the file: it is created before its first line is written
        while time.monotonic() < deadline and not journal_lines(out):
            time.sleep(0.1)
        assert journal_lines(out)
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    assert b"--resume" in output
    assert processes_mentioning([str(out)]) == []
    assert processes_holding(out) == []
    played = len(journal(out))
    assert 1 <= played < 8
    assert main(["tournament", "--resume", str(out)]) == 0
    assert sorted(g["index"] for g in journal(out)) == list(range(8))


def test_external_open_server_keeps_every_record(tmp_path: Path) -> None:
    """An open server (no admin token) withholds a twin's record until its deal group
    has finished: the runner fetches those at the end, so no record is missing."""
    server = LocalServer(tmp_path / "db.sqlite3", tmp_path / "server.log")
    with server:
        out = tmp_path / "t"
        args = ("--server", server.address, "--bot", "random", "--bot", "greedy")
        assert run(out, *args, "--games", "4", "--concurrency", "2") == 0
    games = journal(out)
    assert len(games) == 4
    saved = sorted(p.stem for p in (out / "records").glob("*.json"))
    assert saved == sorted(g["match_id"] for g in games)
    assert sorted(p.stem for p in (out / "records").glob("*.txt")) == saved


def test_external_server_with_admin_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = LocalServer(tmp_path / "db.sqlite3", tmp_path / "server.log", admin_token="s3cret")
    with server:
        out = tmp_path / "t"
        args = ("--server", server.address, "--bot", "random", "--bot", "r2=random")
        assert run(out, *args, "--admin-token", "s3cret", "--games", "2") == 0
        assert len(journal(out)) == 2
        assert not (out / "server.sqlite3").exists()  # the given server was used
        capsys.readouterr()
        # refused before anything is written (tests/tournament/test_cli.py has every case)
        assert run(tmp_path / "u", *args, "--admin-token", "wrong") == 2
        assert "the admin token is wrong" in capsys.readouterr().err
        assert not (tmp_path / "u").exists()
