"""The Node.js example client (examples/node-grpc): real `node` processes speaking
gRPC with @grpc/grpc-js and @grpc/proto-loader play whole 2- and 4-player matches
against a real `cirulla server` subprocess.

The packages come from the lock file (`npm ci`, run here once when node_modules is
missing), so the test needs Node.js 18+ with npm and, the first time, the npm registry.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cirulla.clients.matches.supervise import LocalServer
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, rules_pb2

EXAMPLE = Path(__file__).parents[2] / "examples" / "node-grpc"


@pytest.fixture(scope="module")
def node_client() -> list[str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "the Node.js example needs `node` and `npm` on PATH (Node.js 18+)"
    # one install for every pytest-xdist worker: `npm ci` empties node_modules first, so a
    # second worker's install under a first worker's running client broke it
    lock_path = Path(tempfile.gettempdir()) / f"cirulla-node-grpc-{os.getuid()}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (EXAMPLE / "node_modules" / "@grpc" / "grpc-js").is_dir():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=EXAMPLE,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return [node, str(EXAMPLE / "client.js")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("node-server")
    with LocalServer(tmp / "server.sqlite3", tmp / "server.log") as local:
        yield local.address


@pytest.mark.parametrize(("players", "best_of"), [(2, 3), (4, 1)])
def test_node_grpc_client_plays_whole_matches(
    node_client: list[str], server: str, players: int, best_of: int
) -> None:
    with grpc.insecure_channel(server) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        created = stub.CreateMatch(
            ms.CreateMatchRequest(
                settings=match_settings_pb2.MatchSettings(
                    rules=rules_pb2.Rules(
                        overrides=rules_pb2.RuleOptions(players=players, target=11)
                    ),
                    best_of=best_of,
                    seed=17,
                )
            ),
            timeout=10,
        )
        match_id = created.match.match_id
        procs = []
        for token in created.seat_tokens:
            # The secret goes through the environment, not the command line.
            env = {**os.environ, "CIRULLA_TOKEN": token.token}
            procs.append(
                subprocess.Popen(
                    [*node_client, f"--server={server}", f"--match={match_id}"],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        outputs = []
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, f"node client exited {proc.returncode}: {err}"
            outputs.append(json.loads(out.strip().splitlines()[-1]))
        match = stub.GetMatch(ms.GetMatchRequest(match_id=match_id), timeout=10).match
        records = stub.ListRecords(ms.ListRecordsRequest(match_id=match_id), timeout=10).records
        actions = 0
        for summary in records:
            record = stub.GetRecord(
                ms.GetRecordRequest(record_id=summary.record_id), timeout=10
            ).record
            actions += sum(len(d.actions) for d in record.deals)
            assert not any(a.by_timeout for d in record.deals for a in d.actions)

    assert match.status == 3  # MATCH_STATUS_FINISHED
    assert sorted(o["seat"] for o in outputs) == list(range(players))
    for out in outputs:
        assert out["games"] == len(match.games) >= 1
        assert out["games_won"] == list(match.result.games_won)
        winner = match.result.winner_side if match.result.HasField("winner_side") else None
        assert out["winner_side"] == winner
    # Every action of the match was a decision the node clients answered.
    assert sum(o["decisions"] for o in outputs) == actions > 0


def test_the_readme_node_command_plays_a_sandboxed_tournament(
    node_client: list[str], tmp_path: Path
) -> None:
    """The README's tournament line for the Node.js player, run from the clone's root
    with --sandbox added: the sandbox shows the bot its folder and the paths it names,
    so the client reads the protos from --proto-root=./proto (it looked two folders up,
    outside what the sandbox shows: `ENOENT ... match_service.proto`, every game lost)."""
    readme = (EXAMPLE.parents[1] / "README.md").read_text()
    line = next(x for x in readme.splitlines() if "node-grpc/client.js" in x and "--bot" in x)
    argv = shlex.split(line)
    assert argv[:2] == ["cirulla", "tournament"]
    out = tmp_path / "t"
    short = ["--sandbox", "--games", "2", "--target", "11", "--seed", "5", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "cirulla", *argv[1:], *short],
        cwd=EXAMPLE.parents[1],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    games = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert [g["seat_outcomes"] for g in games] == [["ok", "ok"], ["ok", "ok"]], games
