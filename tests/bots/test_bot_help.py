"""`cirulla bot text --help` and `cirulla bot check --help` show what those forms read,
with their own usage line and examples; they were the whole `cirulla bot` help (its
usage line `cirulla bot ... KIND [CMD ...]` and every mcts option, some 200 lines),
the check's four options at the end."""

from __future__ import annotations

import pytest

from cirulla.cli import main


@pytest.mark.parametrize(
    "form, usage, options, example",
    [
        (
            "text",
            "usage: cirulla bot text [--server HOST:PORT] [--match ID] [--token=TOKEN]",
            ["--server", "--token", "--ladder", "--memory-limit", "--command-timeout"],
            "-- ./my-engine -v",
        ),
        (
            "check",
            "usage: cirulla bot check [--games N]",
            ["--games", "--memory", "--processes", "--cpu", "--limits"],
            "cirulla bot check 'text:./my-engine --level 3'",
        ),
    ],
)
def test_a_command_form_has_its_own_help(
    capsys: pytest.CaptureFixture[str], form: str, usage: str, options: list[str], example: str
) -> None:
    for argv in (["bot", form, "--help"], ["bot", form, "-h"], ["bot", form, "x", "--help"]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith(usage), out
        assert example in out
        for option in options:
            assert f"  {option} " in out, option
        assert "--iterations" not in out and "--weights" not in out
        assert len(out.splitlines()) < 70
        assert ("RLIMIT_NPROC" in out) == (form == "text")  # --processes: this form's meaning
        assert ("answer to `name`" in out) == (form == "text")  # not "default: the kind"


def test_the_bot_help_still_lists_every_kind_and_its_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv in (["bot", "--help"], ["bot", "mcts", "--help"]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith("usage: cirulla bot [-h]")
        assert "--iterations ITERATIONS" in out and "cirulla bot check 'text:CMD ARGS...'" in out
