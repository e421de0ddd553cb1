"""The tournament's command line as a user meets it: every argument checked before anything
is written, one clear line for bad input, saved bot definitions, a time bank, periodic
tables, and a bot that never starts stopping the tournament with its log's tail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.bots.botspec import parse_bots
from cirulla.cli import main
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.tournament.botsfile import load_bots_file
from cirulla.clients.tournament.results import results_document


@pytest.mark.parametrize(
    "args, message",
    [
        (["--bot", "random"], "at least two bots"),
        (["--bot", "random", "--bot", "greedy", "--sprt", "10", "0", "0.05", "0.05"], "elo0"),
        (["--bot", "random", "--bot", "greedy", "--sprt", "0", "10", "0.7", "0.05"], "alpha"),
        (["--bot", "random", "--bot", "nonsense"], "unknown bot kind"),
        # a program given without its form: the error names the forms that run one
        (["--bot", "random", "--bot", "mine=my_bot.py"], "own is 'cmd:COMMAND' (a gRPC player"),
        (["--bot", "my bot=greedy", "--bot", "random"], "not 'my bot'"),
        # a pool database nobody answers at: refused before the output folder is made
        (["--bot", "random", "--bot", "greedy", "--db", "postgresql://x@127.0.0.1:1/x"], "port 1"),
        (["--bot", "random", "--bot", "greedy", "--tc", "60+soon"], "--tc takes"),
        (["--bot", "random", "--bot", "greedy", "--tc", "soon"], "--tc takes"),
        (["--bot", "random", "--bot", "greedy", "--tc", "60+-1"], "--tc increment"),
        # a typo, not an increment of 0: it was taken for "60" and the run went ahead
        (["--bot", "random", "--bot", "greedy", "--tc", "60+"], "--tc takes"),
    ],
)
def test_bad_arguments_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "t"
    assert main(["tournament", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    assert not out.exists()


def test_an_output_folder_that_cannot_be_created_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["tournament", "--out", str(blocker / "t"), "--bot", "random"]) == 2
    assert main(["tournament", "--out", str(blocker / "t")]) == 2
    err = capsys.readouterr().err
    assert "cannot create it (Not a directory)" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["server", "--listen", "nonsense"], "--listen takes HOST:PORT"),
        (["bench", "strength", "--a", "nonsense", "--b", "random", "--games", "2"], "unknown"),
        (["bench", "strength", "--a", "greedy", "--b", "random", "--preset", "nope"], "preset"),
    ],
)
def test_other_commands_refuse_bad_input_in_one_line(argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cirulla", *argv], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_bots_file(tmp_path: Path) -> None:
    path = tmp_path / "bots.toml"
    path.write_text('[bots]\nr = "random"\n[bots.g]\nspec = "greedy"\n')
    assert load_bots_file(path) == parse_bots({"r": "random", "g": "greedy"})
    for text, message in [
        ('[bots.g]\nspecs = "greedy"\n', "unknown keys specs"),
        ('[bots]\n"a b" = "greedy"\n', "names use"),
        ('[bots]\nx = "nonsense"\n', "unknown bot kind"),
        ("[engines]\n", "unknown sections engines"),
        ("[bots\n", "not valid TOML"),
    ]:
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            load_bots_file(path)


def test_tournament_from_a_bots_file_with_a_bank_and_periodic_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bots.toml"
    path.write_text('[bots]\nr = "random"\ng = "greedy"\nunused = "mcts"\n')
    out = tmp_path / "t"
    args = ["tournament", "--out", str(out), "--bots-file", str(path), "--bot", "r"]
    args += ["--bot", "g", "--games", "2", "--target", "11", "--tc", "30+0.25"]
    args += ["--tc-margin", "40"]
    args += ["--report-every", "1", "--concurrency", "1", "--seed", "4"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert printed.count("Standings") == 3  # after each of 2 games, then at the end
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["bots"] == {"r": "random", "g": "greedy"}
    assert doc["settings"]["game_bank_ms"] == 30_000
    assert (doc["settings"]["increment_ms"], doc["settings"]["margin_ms"]) == (250, 40)
    for game in doc["games"]:
        record = json.loads((out / "records" / f"{game['match_id']}.json").read_text())
        control = record["settings"]["time_control"]
        assert (control["game_bank_ms"], control["increment_ms"]) == ("30000", "250")
        assert control["margin_ms"] == "40"
        assert all((out / log).exists() for log in game["logs"])
    # The saved settings hold the specs: resume needs no bots file.
    assert main(["tournament", "--resume", str(out), "--bots-file", str(path)]) == 2
    # a --bot the file does not name is read as a spec; the line names the file's bots
    capsys.readouterr()
    typo = ["tournament", "--out", str(tmp_path / "t2"), "--bots-file", str(path), "--bot", "gg"]
    assert main([*typo, "--bot", "r"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown bot kind 'gg'" in err, err
    assert f"{path} names r, g, unused" in err, err
    assert not (tmp_path / "t2").exists()


def test_a_bot_that_never_starts_stops_the_tournament_with_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t"
    broken = "broken=cmd:{python} -c 'import sys; print(\"no module named mine\"); sys.exit(1)'"
    args = ["tournament", "--out", str(out), "--bot", broken, "--bot", "random"]
    args += ["--games", "10", "--concurrency", "1", "--target", "11"]
    assert main(args) == 1
    printed = capsys.readouterr().out
    assert "did not join its last 3 games" in printed
    assert "no module named mine" in printed  # the tail of its log
    assert "--resume" in printed
    games = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 3
    assert all(g["unjoined"] == [g["seats"].index("broken")] for g in games)


def result(index: int, winner: int) -> GameResult:
    return GameResult(
        index=index,
        match_id=f"m{index}",
        seats=("a", "b") if index % 2 == 0 else ("b", "a"),
        seed=1,
        deal_set=index // 2,
        group=("a", "b"),
        winner=winner,
        totals=(51, 20) if winner == 0 else (20, 51),
        deals=3,
        seat_outcomes=("ok", "ok"),
    )


def test_an_unbounded_elo_is_null_in_results_json() -> None:
    settings = Settings(bots=parse_bots({"a": "random", "b": "greedy"}))
    games = [result(0, 0), result(1, 1)]  # a wins both
    doc = json.loads(json.dumps(results_document(settings, games), allow_nan=False))
    a = next(b for b in doc["standings"]["bots"] if b["bot"] == "a")
    assert a["wins"] == 2 and a["elo"] is None and a["elo_95"][1] is None
    # two wins of two: the interval's lower end is finite (the prior of a zero variance)
    assert isinstance(a["elo_95"][0], float)
    (pair,) = doc["standings"]["head_to_head"]
    assert pair["elo"] is None


def test_a_resumed_run_counts_the_games_it_played_itself(tmp_path: Path) -> None:
    """The last line of a resumed run says how many games it played, beside the total:
    a resume with nothing left said `2 games in 1s` as if it had played them."""
    out = tmp_path / "t"
    first = [sys.executable, "-m", "cirulla", "tournament", "--bot", "random", "--bot", "greedy"]
    first += ["--games", "2", "--target", "11", "--seed", "4", "--max-games", "1"]
    resume = [sys.executable, "-m", "cirulla", "tournament", "--resume", str(out)]
    lines = []
    for argv in ([*first, "--out", str(out)], resume, resume):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        lines.append(next(x for x in done.stdout.splitlines() if "Results:" in x))
    assert lines[0].startswith("1 games in ")
    assert lines[1].startswith("1 games played in ") and "(2 in all)" in lines[1]
    assert lines[2].startswith("0 games played in ") and "(2 in all)" in lines[2]


def test_a_server_that_does_not_answer_or_refuses_the_token_is_one_line(tmp_path: Path) -> None:
    """`--server` is checked before anything is written: no server there, no admin token,
    a wrong one. Each was an rpc error after the output folder was made, with a `--resume`
    hint that could not help."""
    from cirulla.clients.matches.supervise import LocalServer

    def run(*extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "cirulla", "tournament", "--bot", "greedy"]
        argv += ["--bot", "random", "--games", "2", "--target", "11", *extra]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)

    with LocalServer(tmp_path / "s.sqlite3", tmp_path / "s.log", admin_token="sekrit") as server:
        address = server.address
        env = {k: v for k, v in os.environ.items() if k != "CIRULLA_ADMIN_TOKEN"}
        cases = [
            (["--server", "127.0.0.1:1"], "--server 127.0.0.1:1: no match server answers there"),
            (["--server", address], f"--server {address} needs its admin token: --admin-token"),
            (["--server", address, "--admin-token", "wrong"], "the admin token is wrong"),
        ]
        for n, (extra, words) in enumerate(cases):
            out = tmp_path / f"t{n}"
            done = run(*extra, "--out", str(out), env=env)
            assert done.returncode == 2 and words in done.stderr, done.stdout + done.stderr
            assert done.stderr.count("\n") == 1 and not out.exists(), done.stderr
        out = tmp_path / "ok"
        done = run(
            "--server", address, "--out", str(out), env={**env, "CIRULLA_ADMIN_TOKEN": "sekrit"}
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert len((out / "games.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize(
    "content, words",
    [
        ('{"bots": 3}', "(bots must be a table of name: spec, not int)"),
        ("[]", "is not a tournament's settings"),
        ("{}", "is not a tournament's settings"),
    ],
)
def test_resume_of_a_settings_file_that_is_no_tournament_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, words: str
) -> None:
    """A tournament.json edited by hand or from elsewhere: `{"bots": 3}` was an
    AttributeError traceback."""
    (tmp_path / "tournament.json").write_text(content)
    assert main(["tournament", "--resume", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cirulla tournament: error: cannot resume: ") and words in err, err
    assert err.count("\n") == 1


def test_a_bot_that_never_started_is_noted_so_not_with_an_exit_code_it_never_had(
    tmp_path: Path,
) -> None:
    """A `cmd:` program that cannot be started (and a kept bot that exits before it is
    ready) was noted `exited with code 127 without joining the match`: 127 is the
    runner's mark for "not started", not the bot's exit code."""
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--bot", "greedy", "--recover"]
    argv += ["--bot", f"x=cmd:{tmp_path / 'no-such-bot'}", "--games", "2", "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    games = json.loads((out / "results.json").read_text())["games"]
    notes = [note for game in games for note in game["notes"]]
    assert any(n.endswith("(x) did not start; forfeited") for n in notes), notes
    assert not any("code 127" in n for n in notes), notes
