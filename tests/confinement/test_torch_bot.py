"""Issue 39 item 3 and issue 37's "defaults that fit real bots": a PyTorch policy, run by
the python of another virtual environment, plays sandboxed with one documented line, in a
tournament and on a ladder; and a process with PyTorch's memory profile (8 GiB of address
space reserved, 200 MiB touched) plays sandboxed under the default limits.

Under ``--sandbox`` a bot whose command names another Python interpreter failed with "No
module named cirulla": only the runner's own installation was bound, not what that
interpreter imports from (its venv's site-packages, the folders its ``.pth`` files add,
editable installs' source folders). The sandbox now asks the interpreter
(``binds.interpreter_paths``) and binds those folders read-only, each checked.

The PyTorch tests need CI's side environment with a CPU PyTorch (``CIRULLA_RL_PYTHON``,
made by .ci/setup.d/40-rl.sh), as tests/env/test_rl_frameworks.py does: CI sets it, and
then they must pass; without it they say how to get it. The side-venv and memory-profile
tests need no PyTorch and always run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.clients.matches import binds
from cirulla.clients.matches.relay import ServerRelay
from cirulla.clients.matches.sandbox import Confinement
from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, open_store, wait_for
from tests.rl_python import needs_rl, rl_python

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "torch_policy.py"
#: The documented spec (docs/env.md), after the interpreter of the venv with torch.
TORCH_SPEC_TAIL = "-m cirulla.bots.loop policy:model=examples/torch_policy.py"


def torch_bot_folder(where: Path) -> Path:
    """``examples/torch_policy.py`` copied into ``where/examples``, with trained-looking
    weights ``torch_policy.pt`` beside it (saved by torch in the side venv)."""
    examples = where / "examples"
    examples.mkdir(parents=True)
    shutil.copy(EXAMPLE, examples / "torch_policy.py")
    save = (
        "import runpy, torch\n"
        "actor = runpy.run_path('examples/torch_policy.py')['ACTOR']\n"
        "torch.manual_seed(1)\n"
        "for p in actor.parameters(): torch.nn.init.normal_(p, std=0.1)\n"
        "torch.save(actor.state_dict(), 'examples/torch_policy.pt')\n"
    )
    python = rl_python()
    done = subprocess.run(
        [python, "-c", save], cwd=where, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return examples


def torch_lines(logs: str) -> list[str]:
    return [line for line in logs.splitlines() if line.startswith("torch policy: torch ")]


def test_the_documented_line_is_the_tested_one() -> None:
    """docs/env.md shows the spec these tests run, for the tournament and the ladder."""
    text = (ROOT / "docs" / "env.md").read_text()
    assert text.count(TORCH_SPEC_TAIL) >= 2, "docs/env.md lost the torch bot's line"
    assert "cirulla tournament --sandbox" in text and "cirulla ladder add torch" in text


@needs_rl
def test_a_torch_policy_plays_a_sandboxed_tournament_with_one_line(tmp_path: Path) -> None:
    """The documented line, as typed in the folder holding examples/: the side venv's
    python imports torch and cirulla in the sandbox, loads the weights beside the policy
    file, and plays every game under the default limits, no fault."""
    python = rl_python()
    torch_bot_folder(tmp_path)
    argv = [sys.executable, "-m", "cirulla", "tournament", "--sandbox", "--bot", "greedy"]
    argv += ["--bot", f"torch=serve:{python} {TORCH_SPEC_TAIL}"]
    argv += ["--games", "4", "--target", "11", "--seed", "5", "--out", "t"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    logs = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "t" / "logs").glob("*"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:] + logs[-3000:]
    assert "per-bot limits: control groups v" in done.stdout, done.stdout
    said = torch_lines(logs)
    assert said and all("weights torch_policy.pt" in line for line in said), logs[-3000:]
    assert "No module named" not in logs, logs[-3000:]
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 4 and all(set(g["seat_outcomes"]) == {"ok"} for g in games), games
    standings = json.loads((tmp_path / "t" / "results.json").read_text())["standings"]
    assert standings["void_games"] == 0, standings
    entry = next(b for b in standings["bots"] if b["bot"] == "torch")
    assert entry["games"] == 4 and entry["problems"] == {}, entry


@needs_rl
def test_a_torch_policy_plays_on_a_sandboxed_ladder_with_one_line(tmp_path: Path) -> None:
    """``cirulla ladder add torch "serve:PYTHON -m cirulla.bots.loop
    policy:model=/srv/bots/torch/torch_policy.py"`` in the ladder's folder (its SQLite
    database there too, so that folder is private: the bot lives elsewhere, as
    docs/env.md says), then ``ladder serve`` (sandboxed: its default): its matches finish
    with every torch seat ``ok``, no failure counted, the bot still active."""
    python = rl_python()
    model = torch_bot_folder(tmp_path / "srv" / "bots") / "torch_policy.py"
    folder = tmp_path / "ladder"
    ladder = LadderProcess(folder, f"sqlite:///{folder / 'cirulla-ladder.sqlite3'}")
    try:
        ladder.start()
        assert "sandbox=True" in ladder.log.read_text(), ladder.log.read_text()
        ladder.cli("add", "greedy", "greedy")
        spec = f"serve:{python} {TORCH_SPEC_TAIL.replace('examples/', f'{model.parent}/')}"
        added = ladder.cli("add", "torch", spec, "--queue", "2p")
        assert f"policy:model={model}" in added.stdout, added.stdout
        ladder.cli("request", "torch", "greedy", "--games", "2")
        stub = ladder.stub()

        def finished() -> list[ladder_pb2.LadderMatch]:
            history = stub.GetBotHistory(
                ladder_pb2.GetBotHistoryRequest(bot_name="torch", page_size=100)
            )
            done = [
                m
                for m in history.matches
                if m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED and not m.withheld
            ]
            return done if len(done) >= 2 else []

        matches = wait_for(finished, 600, "two finished matches of the torch bot")
        bot = open_store(ladder.db).bots.get_bot("torch")
    finally:
        ladder.stop()
    for match in matches:
        mine = [s for s in match.seats if s.bot_name == "torch"]
        assert mine and all(s.outcome == "ok" for s in mine), (
            [(s.bot_name, s.outcome, s.fault) for s in match.seats],
            list(match.notes),
        )
    assert bot["state"] == "active" and bot["consecutive_failures"] == 0, bot
    assert bot["last_failure"] == "", bot["last_failure"]
    logs = "\n".join(p.read_text(errors="replace") for p in folder.rglob("*.log"))
    assert "No module named" not in logs and "no such file" not in logs, logs[-3000:]
    said = torch_lines(logs)
    assert said and all("weights torch_policy.pt" in line for line in said), logs[-3000:]


def test_a_bot_path_left_out_is_said_in_the_runners_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Found while running the ladder line: a bot kept in the ladder's folder (private:
    its SQLite database is there) saw only "no such file". The runner's log now names the
    path it did not show, once."""
    ladder = tmp_path / "ladder"
    bot = ladder / "examples" / "torch_policy.py"
    bot.parent.mkdir(parents=True)
    bot.write_text("def act(o, m): return 0\n")
    extra = binds.bot_binds([sys.executable, "-m", "x", f"policy:model={bot}"])
    with caplog.at_level("WARNING", logger=binds.__name__):
        args = binds.bwrap_args(extra, [ladder])
        binds.bwrap_args(extra, [ladder])
    assert str(bot.parent) not in args
    said = [r.getMessage() for r in caplog.records if str(bot.parent) in r.getMessage()]
    assert len(said) == 1 and "private path of this runner" in said[0], said


def side_venv(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A virtual environment that is not the runner's, as CI's side venv is made: the
    project reached through a ``.pth`` file, and a folder of its own modules added by an
    ``import`` line of another ``.pth`` (code: only running the interpreter says what it
    adds); that folder holds a private file, and a private folder and ``/etc/ssl`` are
    added too."""
    venv = tmp_path / "side" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    import site

    shared = tmp_path / "shared" / "lib"
    shared.mkdir(parents=True)
    (shared / "sidemod.py").write_text("PLAYER = 'greedy'\n")
    (shared / "secret.txt").write_text("a private file inside an import folder\n")
    hidden = tmp_path / "private-lib"
    hidden.mkdir()
    (hidden / "hiddenmod.py").write_text("X = 1\n")
    site_packages = next((venv / "lib").glob("python3*/site-packages"))
    lines = [f"import site; site.addsitedir({p!r})" for p in site.getsitepackages()]
    lines += [f"import sys; sys.path.extend([{str(shared)!r}, {str(hidden)!r}, '/etc/ssl'])"]
    (site_packages / "side.pth").write_text("\n".join(lines) + "\n")
    return venv / "bin" / "python", shared, hidden


SIDE_PROBE = """
import json, os, sys
seen = {"prefix": sys.prefix}
import sidemod
seen["sidemod"] = sidemod.PLAYER
import cirulla.bots
seen["cirulla"] = "imported"
try:
    import hiddenmod
    seen["hiddenmod"] = "imported"
except ImportError:
    seen["hiddenmod"] = "missing"
for label, path in json.loads(sys.argv[-1]).items():
    try:
        if os.path.isdir(path):
            seen[label] = "listed %d" % len(os.listdir(path))
        else:
            with open(path, "rb") as f:
                seen[label] = "read %d" % len(f.read())
    except OSError as exc:
        seen[label] = "blocked " + type(exc).__name__
print("SEEN " + json.dumps(seen), flush=True)
"""


def test_another_venvs_import_folders_are_bound_and_checked(tmp_path: Path) -> None:
    """What the interpreter of another venv imports from is bound (its prefix, the folders
    its .pth files add, whatever they are); a private file inside such a folder is masked,
    a private folder on its path is not bound, and /etc/ssl/private stays hidden though a
    .pth put /etc/ssl on the path."""
    python, shared, hidden = side_venv(tmp_path)
    secret = shared / "secret.txt"
    private = (secret, hidden)
    found = binds.interpreter_paths(str(python), private)
    assert python.parent.parent in found and shared in found, found
    assert Path("/") not in found and Path("/etc") not in found, found
    assert binds.interpreters([str(python), "-c", "x"]) == [str(python)]
    assert binds.interpreters([sys.executable, "-c", "x"]) == []  # the runner's own: bound
    paths = {"secret": str(secret), "hidden": str(hidden), "ssl-private": "/etc/ssl/private"}
    argv = [str(python), "-c", SIDE_PROBE, json.dumps(paths)]
    with ServerRelay("127.0.0.1:1") as relay:
        wrapped = Confinement(relay, private=private).wrap(argv, {"PATH": "/usr/bin:/bin"})
        done = subprocess.run(
            wrapped.argv, env=wrapped.env, preexec_fn=wrapped.preexec,
            pass_fds=wrapped.pass_fds, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("SEEN ")]
    assert lines, done.stdout + done.stderr
    seen = json.loads(lines[0][5:])
    assert seen["prefix"] == str(python.parent.parent), seen
    assert seen["sidemod"] == "greedy" and seen["cirulla"] == "imported", seen
    assert seen["hiddenmod"] == "missing", seen
    assert seen["secret"].startswith("blocked"), seen  # masked
    assert seen["hidden"].startswith("blocked"), seen  # not bound
    assert seen["ssl-private"] == "listed 0" or seen["ssl-private"].startswith("blocked"), seen


SIDE_BOT = """
import os, sys
from sidemod import PLAYER  # from the folder the side venv's .pth adds
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", PLAYER])
"""


def test_a_bot_run_by_another_venvs_python_plays_a_sandboxed_tournament(tmp_path: Path) -> None:
    """The failure this fixes, without PyTorch: ``cmd:OTHER_VENV/bin/python bot.py`` died
    with "No module named ..." under --sandbox; it now plays every game."""
    python, _, _ = side_venv(tmp_path)
    bot = tmp_path / "bots" / "side" / "bot.py"
    bot.parent.mkdir(parents=True)
    bot.write_text(SIDE_BOT)
    argv = [sys.executable, "-m", "cirulla", "tournament", "--sandbox", "--bot", "random"]
    argv += ["--bot", f"side=cmd:{python} {bot}", "--games", "2", "--target", "11"]
    done = subprocess.run(
        [*argv, "--out", "t"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    standings = json.loads((tmp_path / "t" / "results.json").read_text())["standings"]
    entry = next(b for b in standings["bots"] if b["bot"] == "side")
    assert entry["games"] == 2 and entry["problems"] == {}, entry


#: A policy file with PyTorch's memory profile: it reserves 8 GiB of address space and
#: touches 200 MiB of it when loaded, keeps the mapping while it plays, and plays the first
#: legal index. RLIMIT_AS 2 GiB made `import torch` fail this way under --sandbox.
RESERVER = """
import mmap, sys
SPACE = mmap.mmap(-1, 8 * 1024**3, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for offset in range(0, 200 * 1024**2, 4096):
    SPACE[offset] = 1
print("RESERVED 8 GiB, TOUCHED 200 MiB", file=sys.stderr, flush=True)


def act(observation, action_mask):
    SPACE[0] = 2  # still mapped while it plays
    return int(action_mask.nonzero()[0][0])
"""


def test_a_bot_reserving_8_gib_and_touching_200_mib_plays_sandboxed_under_the_defaults(
    tmp_path: Path,
) -> None:
    """tests/confinement/test_limits.py runs this profile as a bare process in a sandbox; here
    it is a bot (``policy:model=reserver.py``, kept alive) playing a sandboxed tournament
    under the default limits: every game played, no problem."""
    bot = tmp_path / "reserver" / "reserver.py"
    bot.parent.mkdir()
    bot.write_text(RESERVER)
    argv = [sys.executable, "-m", "cirulla", "tournament", "--sandbox", "--bot", "greedy"]
    argv += ["--bot", "reserver=policy:model=reserver/reserver.py", "--games", "2"]
    argv += ["--target", "11", "--seed", "3", "--out", "t"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    logs = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "t" / "logs").glob("*"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "per-bot limits: control groups v" in done.stdout, done.stdout
    assert "RESERVED 8 GiB, TOUCHED 200 MiB" in logs, logs[-3000:]
    standings = json.loads((tmp_path / "t" / "results.json").read_text())["standings"]
    entry = next(b for b in standings["bots"] if b["bot"] == "reserver")
    assert entry["games"] == 2 and entry["problems"] == {}, entry
    assert standings["void_games"] == 0, standings
