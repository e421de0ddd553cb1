"""Fair play of the tournament runner (issue 21): a hostile ``cmd:`` bot in a real
tournament tries to turn everything it is given (its environment, its argv, its seed)
into the decks of its game, and to find the operator's secrets; it learns neither.
Everything the runner writes is the owner's only."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cirulla.clients.matches.schedule import SEED_BITS, bot_seed, deck_seed

# A cmd: bot that dumps what it was given and every deck it can derive from it (each
# integer as a deck seed, and inverted through the old (deck_seed*7 + seat) formula),
# then plays as `cirulla bot random`.
HOSTILE_BOT = """
import json, os, re, sys
from cirulla.rules.cards import card_name
from cirulla.rules.decks import seeded_deck

given = dict(os.environ)
numbers = {int(n) for text in [*given.values(), *sys.argv] for n in re.findall(r"\\d+", text)}
seat = int(given.get("CIRULLA_SEAT", "0"))
inverse7 = pow(7, -1, 2**31)
candidates = set()
for n in numbers:
    candidates.update({n, (n - seat) * inverse7 % 2**31})
decks = [" ".join(card_name(c) for c in seeded_deck(s, 1)) for s in sorted(candidates)[:400]]
print("GIVEN " + json.dumps({"env": given, "argv": sys.argv}), flush=True)
print("DECKS " + json.dumps(decks), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])
"""

ADMIN = "admin-token-must-stay-with-the-runner-7f3a"
OTHER = "operator-secret-in-the-shell-91c2"


def tournament(out: Path, *extra: str, env: dict[str, str] | None = None) -> str:
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out), "--target", "11"]
    done = subprocess.run(
        [*argv, *extra], capture_output=True, text=True, timeout=240, env=env, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def record_decks(out: Path) -> set[str]:
    decks = set()
    for path in (out / "records").glob("*.json"):
        for deal in json.loads(path.read_text())["deals"]:
            for deck in deal["decks"]:
                decks.add(" ".join(card["code"] for card in deck["cards"]))
    return decks


def test_a_hostile_bot_learns_no_deck_and_no_secret(tmp_path: Path) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE_BOT)
    out = tmp_path / "t"
    env = {**os.environ, "CIRULLA_ADMIN_TOKEN": ADMIN, "OPERATOR_SECRET": OTHER}
    spec = f"hostile=cmd:{{python}} {script} {{seed}} {{seat}} {{match}} {{name}}"
    tournament(out, "--bot", spec, "--bot", "random", "--games", "2", env=env)
    logs = [p.read_text() for p in (out / "logs").glob("*.log")]
    dumps = [line for text in logs for line in text.splitlines() if line.startswith("GIVEN ")]
    assert len(dumps) == 2, logs  # one hostile seat per game, and it did run
    every = "\n".join(logs)
    assert ADMIN not in every and OTHER not in every
    given = [json.loads(line[6:]) for line in dumps]
    assert all(set(g["env"]) >= {"CIRULLA_TOKEN", "CIRULLA_SEED", "PATH"} for g in given)
    candidates = {
        deck
        for text in logs
        for line in text.splitlines()
        if line.startswith("DECKS ")
        for deck in json.loads(line[6:])
    }
    decks = record_decks(out)
    assert decks and len(candidates) > 10
    assert not candidates & decks


def test_the_bots_seed_is_independent_of_the_deck_seed() -> None:
    # same game index and seat, different deck seeds: nothing of the deal goes in
    assert bot_seed(5, 3, 1) == bot_seed(5, 3, 1) != bot_seed(6, 3, 1)
    assert bot_seed(5, 3, 0) != bot_seed(5, 3, 1)
    assert 0 <= bot_seed(2**64 - 1, 10**6, 3) < 2**31


def test_an_explicit_seed_gives_todays_decks_and_the_default_is_wide(tmp_path: Path) -> None:
    # --seed 1 deals exactly what it always dealt (same seeds, same games)
    assert [deck_seed(1, k) for k in range(3)] == [1206740962, 923144929, 101945293]
    out = tmp_path / "t"
    tournament(out, "--bot", "random", "--bot", "greedy", "--games", "2")
    saved = json.loads((out / "tournament.json").read_text())
    assert saved["seed"] >= 2**SEED_BITS  # no 2**31 search finds it from a finished game
    assert isinstance(saved["bot_seed"], int)
    assert (
        deck_seed(saved["seed"], 0).bit_length() > SEED_BITS
        or deck_seed(saved["seed"], 1).bit_length() > SEED_BITS
    )


def test_everything_the_runner_writes_is_the_owners_only(tmp_path: Path) -> None:
    out = tmp_path / "t"
    old = os.umask(0o022)
    try:
        tournament(out, "--bot", "random", "--bot", "greedy", "--games", "2", "--seed", "4")
    finally:
        os.umask(old)
    paths = [out, *out.rglob("*")]
    assert any(p.name.endswith(".sqlite3") for p in paths)
    assert any(p.parent.name == "records" for p in paths)
    for path in paths:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
        if path.is_dir():
            assert mode == 0o700, f"{path} is {oct(mode)}"


def test_a_resume_restores_a_journaled_games_missing_record(tmp_path: Path) -> None:
    out = tmp_path / "t"
    tournament(out, "--bot", "random", "--bot", "greedy", "--games", "2", "--seed", "6")
    journaled = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(journaled) == 2
    records = sorted((out / "records").glob("*.json"))
    assert len(records) == 2  # a record file for every journaled game
    lost = records[0]
    saved = lost.read_text()
    lost.unlink()  # as if the runner was killed between the journal line and the record
    done = subprocess.run(
        [sys.executable, "-m", "cirulla", "tournament", "--resume", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert lost.exists() and json.loads(lost.read_text()) == json.loads(saved)


# A stubborn kept-alive bot: it marks itself (its pid in a folder), relays its stdin to
# `cirulla.bots.loop random` and, when its stdin closes, stays (a polite bot would leave).
MARKED_SERVE_BOT = """
import os, subprocess, sys, time
from pathlib import Path
(Path(sys.argv[1]) / str(os.getpid())).write_text("")
loop = subprocess.Popen(
    [sys.executable, "-m", "cirulla.bots.loop", "random", "--name=m"], stdin=subprocess.PIPE
)
for line in sys.stdin.buffer:
    loop.stdin.write(line)
    loop.stdin.flush()
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_kept_alive_bots_die_with_a_sigkilled_runner(tmp_path: Path) -> None:
    script = tmp_path / "marked.py"
    script.write_text(MARKED_SERVE_BOT)
    pids = tmp_path / "pids"
    pids.mkdir()
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out)]
    argv += ["--bot", f"m=serve:{{python}} {script} {pids}", "--bot", "greedy"]
    argv += ["--games", "200", "--concurrency", "2"]
    runner = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not (out / "games.jsonl").exists():
            time.sleep(0.1)
        marked = [int(p.name) for p in pids.iterdir()]
        assert marked and any(alive(pid) for pid in marked)
    finally:
        runner.kill()
        runner.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(pid) for pid in marked):
        time.sleep(0.1)
    assert not [pid for pid in marked if alive(pid)]


# A cmd: bot that, sandboxed, tries what a bot author who read our code would: the
# runner's files (it knows where they are), the machine's other processes, the network
# beside the match server, and a setsid child left behind
# (marked so that the test finds it on the host); then it plays as `cirulla bot random`.
SANDBOXED_BOT = """
import json, os, socket, subprocess, sys
from pathlib import Path

OUT, PORT, MARK = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen = {}
for name in ("tournament.json", "server.sqlite3", "games.jsonl", "logs"):
    try:
        path = Path(OUT) / name
        seen[name] = sorted(os.listdir(path)) if path.is_dir() else path.read_bytes()[:40].hex()
    except OSError as exc:
        seen[name] = "refused: " + type(exc).__name__
seen["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    seen["network"] = "connected"
except OSError as exc:
    seen["network"] = "refused: " + type(exc).__name__
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(600)", MARK], start_new_session=True
)
print("SEEN " + json.dumps(seen), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])
"""


def marked_processes(mark: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and alive(int(proc.name)):
            try:
                if mark.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def test_a_sandboxed_bot_reaches_only_the_match_server(tmp_path: Path) -> None:
    import socket

    script = tmp_path / "sandboxed.py"
    script.write_text(SANDBOXED_BOT)
    out = tmp_path / "t"
    mark = f"cirulla-test-mark-{os.getpid()}"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.settimeout(0.1)
        port = listener.getsockname()[1]
        spec = f"hostile=cmd:{{python}} {script} {out} {port} {mark}"
        env = {**os.environ, "CIRULLA_ADMIN_TOKEN": ADMIN}
        tournament(out, "--sandbox", "--bot", spec, "--bot", "greedy", "--games", "2", env=env)
        try:
            listener.accept()
            reached = True
        except TimeoutError:
            reached = False
    assert not reached  # the bot's connection never left its sandbox
    logs = [p.read_text() for p in (out / "logs").glob("*.log")]
    seen = [json.loads(line[5:]) for t in logs for line in t.splitlines() if line[:5] == "SEEN "]
    assert len(seen) == 2, logs
    for report in seen:
        assert all(report[name].startswith("refused") for name in ("tournament.json", "logs"))
        assert report["server.sqlite3"].startswith("refused")
        assert report["network"].startswith("refused")
        assert len(report["processes"]) <= 3  # bwrap's init, the bot, its child: no other
    results = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(results) == 2, results
    assert all(r["seat_outcomes"] == ["ok", "ok"] and r["deals"] > 0 for r in results), results
    assert ADMIN not in "\n".join(logs)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and marked_processes(mark):
        time.sleep(0.1)
    assert marked_processes(mark) == []  # the setsid child died with its sandbox


def test_sandbox_refusals_are_one_line(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(tmp_path / "t")]
    argv += ["--sandbox", "--db", "postgresql://nobody@127.0.0.1:1/none"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--sandbox" in done.stderr, done.stderr


def test_a_bots_output_reaches_the_operators_terminal_as_data(tmp_path: Path) -> None:
    # a bot that never joins: the runner stops and shows the end of its log
    script = tmp_path / "loud.py"
    script.write_text(
        'print("\\x1b]8;;file:///etc/passwd\\x1b\\\\click\\x1b]8;;\\x1b\\\\ '
        '\\x1b[2J\\x1b[31m[bold red]LOUD[/]\\x07", flush=True)\nraise SystemExit(3)\n'
    )
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(tmp_path / "t")]
    argv += ["--bot", f"loud=cmd:{{python}} {script}", "--bot", "random", "--games", "6"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "click" in output and "LOUD" in output  # the log's text is shown
    assert "\x1b]" not in output and "\x1b[2J" not in output and "\x07" not in output
    assert "[bold red]LOUD[/]" in output  # shown as written, not taken as markup


def test_a_sandboxed_command_names_its_files_by_absolute_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cirulla.clients.matches.binds import absolute_argv, named_paths

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.npz").write_bytes(b"x")
    (tmp_path / "random").write_text("a file named like a bot kind")
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text("")
    argv = ["python", "-m", "cirulla.bots.loop", "policy:model=agent.npz", "random"]
    argv += ["bots/mine.py", "--name=p"]
    assert absolute_argv(argv) == [
        "python",
        "-m",
        "cirulla.bots.loop",
        f"policy:model={tmp_path / 'agent.npz'}",
        "random",  # a bare word stays a name
        str(tmp_path / "bots" / "mine.py"),
        "--name=p",
    ]
    assert set(named_paths(argv)) == {tmp_path / "agent.npz", tmp_path / "bots" / "mine.py"}


def test_a_sandboxed_seats_token_is_on_no_command_line() -> None:
    from cirulla.clients.matches.relay import ServerRelay
    from cirulla.clients.matches.sandbox import Confinement

    env = {"PATH": os.environ["PATH"], "CIRULLA_TOKEN": "seat-token-3e1f", "CIRULLA_SEAT": "1"}
    with ServerRelay("127.0.0.1:1") as relay:
        show = [sys.executable, "-c", "import os; print(os.environ['CIRULLA_TOKEN'])"]
        wrapped = Confinement(relay).wrap(show, env)
        argv, outer = wrapped.argv, wrapped.env
        assert not any("seat-token-3e1f" in arg for arg in argv)  # `ps` shows bwrap's argv
        assert outer["CIRULLA_TOKEN"] == "seat-token-3e1f" and outer["HOME"] == "/tmp/home"
        done = subprocess.run(
            argv, env=outer, pass_fds=wrapped.pass_fds, capture_output=True, text=True,
            timeout=30, check=False,
        )  # fmt: skip
    assert done.stdout.strip() == "seat-token-3e1f", done.stderr
