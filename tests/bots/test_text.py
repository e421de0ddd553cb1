"""The text engine protocol end to end: engines in C and JavaScript (examples)
play complete matches against a real server through `cirulla bot text`; `cirulla bot
check` passes them and catches a broken engine; a built-in bot behind `cirulla engine`
bridged back plays exactly the moves it plays over gRPC; tournaments take `text:` specs.

Everything runs as a newcomer would: subprocesses, a real server, gcc and node.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cirulla.clients.matches.supervise import LocalServer
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc

CIRULLA = [sys.executable, "-m", "cirulla"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("text-server")
    with LocalServer(tmp / "server.sqlite3", tmp / "server.log") as local:
        yield local.address


@pytest.fixture(scope="module")
def c_engine(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build examples/text_engine.c (.ci/setup.d)"
    binary = tmp_path_factory.mktemp("c-engine") / "text_engine"
    subprocess.run(
        [
            gcc,
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(binary),
            str(EXAMPLES / "text_engine.c"),
        ],
        check=True,
    )
    return [str(binary)]


@pytest.fixture(scope="module")
def js_engine() -> list[str]:
    node = shutil.which("node")
    assert node, "node is needed to run examples/text_engine.js (.ci/setup.d)"
    return [node, str(EXAMPLES / "text_engine.js")]


def create(server: str, *extra: str) -> tuple[str, list[str]]:
    done = subprocess.run(
        [*CIRULLA, "match", "create", f"--server={server}", "--json", *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return data["match_id"], data["tokens"]


def env_for(server: str, match_id: str, token: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIRULLA_")}
    env.update(CIRULLA_SERVER=server, CIRULLA_MATCH=match_id, CIRULLA_TOKEN=token)
    return env


def play(
    server: str, match_id: str, tokens: list[str], seats: list[list[str]], tmp: Path
) -> list[str]:
    """Run one command per seat (connection from the environment); their logs."""
    procs = []
    for seat, (argv, token) in enumerate(zip(seats, tokens, strict=True)):
        log = (tmp / f"{match_id}-{seat}.log").open("wb")
        procs.append(
            subprocess.Popen(
                argv, env=env_for(server, match_id, token), stdout=log, stderr=subprocess.STDOUT
            )
        )
    for seat, proc in enumerate(procs):
        code = proc.wait(300)
        assert code == 0, (tmp / f"{match_id}-{seat}.log").read_text()[-3000:]
    return [(tmp / f"{match_id}-{s}.log").read_text() for s in range(len(seats))]


def finished(server: str, match_id: str):
    with grpc.insecure_channel(server) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        match = stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=match_id), timeout=10)
        records = stub.ListRecords(
            match_service_pb2.ListRecordsRequest(match_id=match_id), timeout=10
        ).records
        full = [
            stub.GetRecord(
                match_service_pb2.GetRecordRequest(record_id=r.record_id), timeout=10
            ).record
            for r in sorted(records, key=lambda r: r.game_number)
        ]
    return match.match, full


def moves(records) -> list[tuple[int, str]]:
    return [(a.seat, a.notation) for r in records for d in r.deals for a in d.actions]


def text_bot(engine: list[str]) -> list[str]:
    return [*CIRULLA, "bot", "text", "--", *engine]


@pytest.mark.parametrize("players", [2, 4])
def test_c_and_js_engines_play_complete_matches(
    server: str, c_engine: list[str], js_engine: list[str], players: int, tmp_path: Path
) -> None:
    match_id, tokens = create(
        server,
        "--players",
        str(players),
        "--target",
        "21",
        "--move-limit",
        "5000",
        "--seed",
        str(players),
    )
    if players == 2:
        seats = [text_bot(c_engine), text_bot(js_engine)]
    else:  # the C engine and a greedy bot against the JavaScript engine and random
        seats = [
            text_bot(c_engine),
            text_bot(js_engine),
            [*CIRULLA, "bot", "greedy"],
            [*CIRULLA, "bot", "random"],
        ]
    logs = play(server, match_id, tokens, seats, tmp_path)
    match, records = finished(server, match_id)
    assert match.result.HasField("winner_side")
    assert [s.name for s in match.seats[:2]] == ["c-example", "js-example"]
    assert all(s.illegal_actions == 0 and s.timeouts == 0 for s in match.seats)
    played = moves(records)
    assert {seat for seat, _ in played} == set(range(players))
    assert "engine: new game, I am seat 0" in logs[0]  # the C engine's stderr, in the log
    assert "protocol violation" not in logs[0] + logs[1]


def test_bot_check_passes_the_example_engines(c_engine: list[str], js_engine: list[str]) -> None:
    for engine in (c_engine, js_engine):
        done = subprocess.run(
            [*CIRULLA, "bot", "check", "text:" + " ".join(engine)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip().splitlines()[-1].startswith("PASS: 4 games")


BROKEN = """
import sys, time
n = 0
for line in sys.stdin:
    ident, _, rest = line.strip().partition(" ")
    command, _, args = rest.partition(" ")
    if command == "protocol_version":
        print(f"={ident} 1\\n", flush=True)
    elif command == "name":
        print("= broken\\n", flush=True)            # no id
    elif command == "list_commands":
        print(f"={ident} protocol_version\\nname\\ngenmove\\n", flush=True)
    elif command == "genmove":
        n += 1
        legal = args.split(" ", 1)[1].split(";")
        if n % 4 == 1:
            print(f"={ident} {len(legal) + 5}\\n", flush=True)   # out of range
        elif n % 4 == 2:
            print(f"={ident} take everything\\n", flush=True)   # not an action
        elif n in (3, 7) and int(args.split()[0]) < 2000:
            time.sleep(1.5)                                      # too slow (twice)
            print(f"={ident} 0\\n", flush=True)
        else:
            print(f"={ident} 0\\n", flush=True)
    elif command == "quit":
        print(f"={ident}\\n", flush=True)
        break
    else:
        print(f"={ident}\\n", flush=True)                 # '=' even to unknown commands
"""


@pytest.mark.slow
def test_bot_check_catches_a_broken_engine(tmp_path: Path, server: str) -> None:
    script = tmp_path / "broken.py"
    script.write_text(textwrap.dedent(BROKEN))
    done = subprocess.run(
        [*CIRULLA, "bot", "check", "--games=1", f"text:{sys.executable} {script}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "FAIL:" in out.splitlines()[-1]
    assert "answer without the command's id" in out
    assert "list_commands does not list version, known_command" in out
    assert "genmove: index" in out and "is out of range" in out
    assert "'take everything' is neither an index nor an action" in out
    assert "unknown command was answered with '='" in out
    assert ">> 2 name" in out and "<< = broken" in out  # the offending exchange
    # Through the bridge on a real server, its bad answers are illegal actions the server
    # counts, and the game goes on with the default action.
    # With a 1 s move clock its slow answers come too late: the default action is
    # played, and the late answer is recognized by its id and dropped.
    match_id, tokens = create(server, "--target", "11", "--seed", "9", "--move-limit", "1000")
    logs = play(
        server,
        match_id,
        tokens,
        [text_bot([sys.executable, str(script)]), [*CIRULLA, "bot", "random"]],
        tmp_path,
    )
    assert "no answer to genmove within" in logs[0]
    assert "dropped the engine's late answer" in logs[0]
    match, _ = finished(server, match_id)
    assert match.seats[0].illegal_actions >= 1
    assert match.result.HasField("winner_side")


@pytest.mark.parametrize("spec", ["greedy", "mcts:iterations=40"])
def test_engine_bridged_back_plays_the_same_moves_as_over_grpc(
    server: str, spec: str, tmp_path: Path
) -> None:
    kind, _, option = spec.partition(":")
    options = [f"--option={option}"] if option else []
    same = ["--players", "2", "--target", "11", "--seed", "77"]
    grpc_id, grpc_tokens = create(server, *same)
    text_id, text_tokens = create(server, *same)
    opponent = [*CIRULLA, "bot", "random", "--seed", "5"]
    play(
        server,
        grpc_id,
        grpc_tokens,
        [[*CIRULLA, "bot", kind, "--seed", "3", *options], opponent],
        tmp_path,
    )
    play(
        server,
        text_id,
        text_tokens,
        [text_bot([*CIRULLA, "engine", kind, "--seed", "3", *options]), opponent],
        tmp_path,
    )
    _, over_grpc = finished(server, grpc_id)
    _, over_text = finished(server, text_id)
    assert len(moves(over_grpc)) > 20
    assert moves(over_text) == moves(over_grpc)


def test_tournament_takes_a_text_engine_spec(c_engine: list[str], tmp_path: Path) -> None:
    out = tmp_path / "t"
    done = subprocess.run(
        [
            *CIRULLA,
            "tournament",
            "--bot",
            "greedy",
            "--bot",
            "c=text:" + c_engine[0],
            "--games",
            "2",
            "--target",
            "11",
            "--seed",
            "4",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2
    assert all(set(g["seat_outcomes"]) == {"ok"} for g in games), games
    logs = list((out / "logs").glob("*.log"))
    assert any("engine c-example" in p.read_text() for p in logs)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("greedy", "'greedy' is a built-in bot kind, not an engine command"),
        ("mcts:iterations=5", "as a text engine it is 'text:{python} -m cirulla engine mcts'"),
        ("cmd:{python} my_bot.py", "'cmd:{python} my_bot.py' is a cmd: bot (gRPC)"),
        ("serve:./mine", "bot check checks text-protocol engines"),
    ],
)
def test_bot_check_of_a_spec_that_is_no_engine_says_so_in_one_line(spec: str, words: str) -> None:
    """A built-in kind or a gRPC bot given to `bot check` is refused naming what it is,
    not started as a command ("cannot start the engine greedy", four times)."""
    done = subprocess.run(
        [*CIRULLA, "bot", "check", spec], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert words in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_bot_check_of_an_engine_that_cannot_start_reports_it_once(tmp_path: Path) -> None:
    """The first game shows the engine cannot start: the check stops there, one error."""
    missing = tmp_path / "no-such-engine"
    done = subprocess.run(
        [*CIRULLA, "bot", "check", f"text:{missing}"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    errors = [line for line in done.stdout.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: cannot start the engine {missing}: "
        f"[Errno 2] No such file or directory: '{missing}'"
    ], done.stdout
    assert done.stdout.splitlines()[-1].startswith("FAIL: 0 games")


@pytest.mark.parametrize("prefix", ["text:", ""])
def test_bot_check_fills_in_python_as_the_tournament_does(prefix: str) -> None:
    """`text:{python} ...` means the same to `bot check` as to `tournament --bot`, and so
    does the same command without `text:` (docs/text-protocol.md, "Checking an engine")."""
    done = subprocess.run(
        [*CIRULLA, "bot", "check", "--games=1", f"{prefix}{{python}} -m cirulla engine random"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("PASS: 1 games")


def test_the_readme_java_engine_plays_sandboxed_as_written(tmp_path: Path) -> None:
    """The README's compile and tournament lines for examples/TextEngine.java, run from a
    folder of one's own with --sandbox added: `-cp ./classes` is bound as a path (a bare
    `classes` is a name, and the sandboxed JVM found no class)."""
    readme = (EXAMPLES.parent / "README.md").read_text()
    javac_line = next(x for x in readme.splitlines() if x.startswith("javac "))
    run_line = next(x for x in readme.splitlines() if "java='text:" in x)
    javac = shlex.split(javac_line.partition("#")[0])
    assert shutil.which("javac"), "javac is needed (.ci/setup.d/35-java.sh)"
    javac[-1] = str(EXAMPLES / "TextEngine.java")  # the clone's file, from another folder
    subprocess.run(javac, cwd=tmp_path, check=True, timeout=300)
    argv = shlex.split(run_line)
    assert argv[:2] == ["cirulla", "tournament"]
    short = ["--sandbox", "--games", "2", "--target", "11", "--seed", "5", "--out", "t"]
    done = subprocess.run(
        [*CIRULLA, *argv[1:], *short], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = [json.loads(x) for x in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert [g["seat_outcomes"] for g in games] == [["ok", "ok"], ["ok", "ok"]], games
