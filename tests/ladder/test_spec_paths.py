"""Specs that work where they run: ``cirulla ladder add`` resolves a spec's relative
paths in the operator's folder (or refuses a missing one with one line, registering
nothing), so the bot starts in the ladder's worker, sandboxed, from another folder. A bot
deactivated for crashing shows the tail of its own stderr in ``standings --all`` and
``history``. On a real ladder, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.ladder.spec_paths import SpecPathError, hidden_path, resolve_spec_paths
from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, wait_for

CRASHING_BOT = """\
import sys
print("crashing_bot: my own last words on stderr", file=sys.stderr)
sys.exit(3)
"""


def ops(ladder: LadderProcess, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``cirulla ladder ARGS`` typed by an operator in ``folder``, not the ladder's."""
    state = json.loads((ladder.folder / "cirulla-ladder.json").read_text())
    return subprocess.run(
        [sys.executable, "-m", "cirulla", "ladder", *args, "--server", ladder.address,
         "--admin-token-file", state["admin_token_file"]],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


def test_resolve_spec_paths(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text("")
    (tmp_path / "agent.npz").write_text("")
    bot = tmp_path / "bots" / "mine.py"
    assert resolve_spec_paths("cmd:{python} bots/mine.py {server}", tmp_path) == (
        f"cmd:{{python}} {bot} {{server}}"
    )
    assert resolve_spec_paths("text:node ./bots/mine.py --x=1", tmp_path) == (
        f"text:node {bot} --x=1"
    )
    assert resolve_spec_paths("policy:model=agent.npz", tmp_path) == (
        f"policy:model={tmp_path / 'agent.npz'}"
    )
    for unchanged in ("random", "connect", "mcts:iterations=200", "cmd:{python} -m my.mod"):
        assert resolve_spec_paths(unchanged, tmp_path) == unchanged
    for missing in ("cmd:{python} bot.py", "cmd:./engine", "policy:model=gone.npz"):
        with pytest.raises(SpecPathError, match="does not exist"):
            resolve_spec_paths(missing, tmp_path)


def test_hidden_path_names_a_spec_file_inside_a_private_folder(tmp_path: Path) -> None:
    ops_folder = tmp_path / "ops"
    (ops_folder / "bots").mkdir(parents=True)
    bot = ops_folder / "bots" / "mine.py"
    bot.write_text("")
    link = tmp_path / "link-to-ops"
    link.symlink_to(ops_folder)
    private = [ops_folder]
    (ops_folder / "agent.npz").write_text("")
    elsewhere = tmp_path / "b.py"
    elsewhere.write_text("")
    assert hidden_path(f"cmd:{{python}} {bot}", private) == (str(bot), ops_folder)
    assert hidden_path(f"text:{{python}} {link}/bots/mine.py", private) is not None  # real
    assert hidden_path(f"cmd:{bot} --x", private) == (str(bot), ops_folder)  # the program
    model = ops_folder / "agent.npz"
    assert hidden_path(f"policy:model={model}", private) == (str(model), ops_folder)
    fine = ["random", "connect", "mcts:iterations=200", f"cmd:{{python}} {elsewhere}"]
    # a word that is not the program may name anything (the sandbox hides it all the same)
    fine.append(f"cmd:{{python}} {elsewhere} {bot} --data={ops_folder}")
    for spec in fine:
        assert hidden_path(spec, private) is None, spec


def test_a_bot_beside_the_ladders_database_is_refused_at_add(tmp_path: Path) -> None:
    """The README's layout: ``serve`` in a folder, its SQLite database there (the default
    ``--db``), the operator adding a bot of their own from the same folder. The sandbox
    never shows that folder, so such a bot was accepted, then started without its file
    and was deactivated after three games; ``add`` now refuses it in one line."""
    folder = tmp_path / "ops"
    ladder = LadderProcess(folder, f"sqlite:///{folder / 'cirulla-ladder.sqlite3'}")
    ladder.start()
    (folder / "bots").mkdir()
    (folder / "bots" / "mine.py").write_text(CRASHING_BOT)
    elsewhere = tmp_path / "bots-of-my-own"
    elsewhere.mkdir()
    (elsewhere / "mine.py").write_text(CRASHING_BOT)
    try:
        refused = ops(ladder, folder, "add", "mine", "cmd:{python} bots/mine.py")
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        line = refused.stderr
        assert f"{folder / 'bots' / 'mine.py'} lies in {folder.resolve()}" in line, line
        assert "a folder of their own" in line, line
        names = {
            e["bot"]["name"]
            for e in json.loads(ladder.cli("standings", "--json", "--all").stdout)["entries"]
        }
        assert "mine" not in names  # nothing registered
        added = ops(ladder, folder, "add", "mine", f"cmd:{{python}} {elsewhere / 'mine.py'}")
        assert added.returncode == 0, added.stderr
    finally:
        ladder.stop()


@pytest.mark.slow
def test_relative_spec_runs_in_the_worker_and_a_crash_shows_its_stderr(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, db_url: str
) -> None:
    ladder = LadderProcess(tmp_path / "ladder", db_url)
    ladder.start()
    # outside the ladder's folders (the SQLite file's folder is never bound in the sandbox)
    mine = tmp_path_factory.mktemp("operator")
    (mine / "bots").mkdir(parents=True)
    (mine / "bots" / "crashing_bot.py").write_text(CRASHING_BOT)
    try:
        refused = ops(ladder, mine, "add", "ghost", "cmd:{python} bots/no_such_bot.py")
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        assert "bots/no_such_bot.py does not exist" in refused.stderr
        assert ops(ladder, mine, "add", "rnd", "random").returncode == 0
        added = ops(ladder, mine, "add", "crasher", "cmd:{python} bots/crashing_bot.py")
        assert added.returncode == 0, added.stderr
        absolute = str(mine / "bots" / "crashing_bot.py")
        assert absolute in added.stdout
        standings = json.loads(ladder.cli("standings", "--json", "--all").stdout)
        names = {e["bot"]["name"] for e in standings["entries"]}
        assert "ghost" not in names  # the refused add registered nothing
        history = json.loads(ladder.cli("history", "crasher", "--json").stdout)
        assert history["bot"]["spec"] == f"cmd:{{python}} {absolute}"

        def deactivated() -> bool:
            # polled over the rpc (an interpreter a poll was most of this test's CPU); the
            # command line shows the result below
            request = ladder_pb2.GetStandingsRequest(include_inactive=True)
            out = ladder.stub().GetStandings(request, timeout=60)
            bot = next(e.bot for e in out.entries if e.bot.name == "crasher")
            return bot.state == ladder_pb2.BOT_STATE_DEACTIVATED

        wait_for(deactivated, 240, "the crashing bot deactivated", every=0.2)

        def shown() -> bool:
            """The last failure may be a duplicate pair's first game, whose log is withheld
            until its twin ends (as the rpc withholds it): the twin ends by forfeit soon
            after. Waited for over the rpc; then the command's table must show it."""
            request = ladder_pb2.GetStandingsRequest(include_inactive=True)
            out = ladder.stub().GetStandings(request, timeout=60)
            bot = next(e.bot for e in out.entries if e.bot.name == "crasher")
            return "my own last words on stderr" in bot.last_log

        wait_for(shown, 60, "the crasher's own stderr in the standings", every=0.2)
        wait_for(
            lambda: "my own last words on stderr" in ladder.cli("standings", "--all").stdout,
            60,
            "the crasher's own stderr in the standings' table",
            every=0.2,
        )
        wait_for(
            lambda: "my own last words on stderr" in ladder.cli("history", "crasher").stdout,
            60,
            "the crasher's own stderr in its history",
            every=0.2,
        )
        history_text = ladder.cli("history", "crasher").stdout
        # it crashed in the worker's sandbox, found by its absolute path (not "No such file")
        assert "No such file" not in history_text
    finally:
        ladder.stop()
