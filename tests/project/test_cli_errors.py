"""A wrong option or value on any ``cirulla`` command line is one line on stderr, naming
the command it was given to (the innermost subcommand) and the option, and exit status
2: not argparse's usage block first, and not the top-level ``cirulla`` for an option
of ``cirulla ladder standings``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cirulla.cli import main


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["tournament", "--games", "0"],
            "cirulla tournament: error: argument --games: must be at least 1, not 0"
            " (see cirulla tournament --help)",
        ),
        (
            ["tournament", "--frobnicate"],
            "cirulla tournament: error: unrecognized arguments: --frobnicate"
            " (see cirulla tournament --help)",
        ),
        (
            ["ladder", "standings", "--frob"],
            "cirulla ladder standings: error: unrecognized arguments: --frob"
            " (see cirulla ladder standings --help)",
        ),
        (
            ["bench", "rules", "--frob"],
            "cirulla bench rules: error: unrecognized arguments: --frob"
            " (see cirulla bench rules --help)",
        ),
        (
            ["rules", "options", "--frob"],
            "cirulla rules options: error: unrecognized arguments: --frob"
            " (see cirulla rules options --help)",
        ),
        (
            # 0 was the default in a new run and voided every game of a resumed one
            ["tournament", "--game-timeout", "0"],
            "cirulla tournament: error: argument --game-timeout: must be more than 0 seconds,"
            " not 0 (see cirulla tournament --help)",
        ),
        (
            # argparse's own words named the checking function: "invalid _positive_int value"
            ["tournament", "--games", "abc"],
            "cirulla tournament: error: argument --games: takes a whole number, not 'abc'"
            " (see cirulla tournament --help)",
        ),
        (
            ["match", "create", "--bank", "x"],
            "cirulla match create: error: argument --bank: takes a whole number, not 'x'"
            " (see cirulla match create --help)",
        ),
        (
            # protobuf's words were "Value out of range: -5"
            ["match", "create", "--seed", "-5"],
            "cirulla match create: error: argument --seed: must be 0 to 2^64-1, not -5"
            " (see cirulla match create --help)",
        ),
        (
            # argparse listed CMD too, which only `bot text` and `bot check` take
            ["bot"],
            "cirulla bot: error: the following arguments are required: KIND"
            " (see cirulla bot --help)",
        ),
        (
            ["watch"],
            "cirulla watch: error: the following arguments are required: MATCH_ID"
            " (see cirulla watch --help)",
        ),
    ],
)
def test_a_bad_option_is_one_line_naming_the_command_and_the_option(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == line + "\n"


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            # argparse took it for --port-file 50999: a file named 50999 was written and
            # the server listened on its default port
            ["server", "--port", "50999", "--listen", "127.0.0.1:99999"],  # fails fast anyway
            "cirulla server: error: unrecognized arguments: --port 50999"
            " (see cirulla server --help)",
        ),
        (
            ["tournament", "--gam", "3", "--bot", "no-such-kind"],
            "cirulla tournament: error: unrecognized arguments: --gam 3"
            " (see cirulla tournament --help)",
        ),
    ],
)
def test_an_option_must_be_spelled_out(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    argv: list[str],
    line: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == line + "\n"
    assert list(tmp_path.iterdir()) == []
