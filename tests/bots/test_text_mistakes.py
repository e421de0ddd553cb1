"""A new engine's first mistakes, named in the error it gets (docs/text-protocol.md,
"Framing"): an engine that dies at start shows the last lines of its stderr, one that
never flushes its output and one that forgets the empty line after an answer are told
so, instead of a bare "did not answer 'protocol_version' in time" after 10 s; a script
not made executable, or named without ./, is told what to write.

Real engine processes (small scripts), and `cirulla bot check` on a real local server.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from cirulla.bots.processes import PR_SET_CHILD_SUBREAPER, prctl
from cirulla.bots.text.engine_io import EngineError, EngineProcess
from tests.bots.test_text import CIRULLA


@pytest.fixture(autouse=True)
def not_a_subreaper_after() -> Iterator[None]:
    """EngineProcess makes its process a subreaper (the bridge adopts its engine's
    orphans), here the test worker: left so, every later orphan of the worker's tests
    (a PostgreSQL server pgtemp started) would become its zombie, never reaped, and
    look alive in /proc to whatever waits for it to end."""
    yield
    prctl(PR_SET_CHILD_SUBREAPER, 0)


#: An engine that reads its commands and answers each with ``=ID 1``, buffered or not,
#: with or without the empty line that ends an answer.
ANSWERS = """
import sys
FLUSH, BLANK = sys.argv[1] == "flush", sys.argv[2] == "blank"
out = open(1, "w", buffering=65536, closefd=False)  # block-buffered, whatever the env says
for line in sys.stdin:
    out.write(line.split()[0].join(("=", " 1\\n")) + ("\\n" if BLANK else ""))
    if FLUSH:
        out.flush()
"""


def script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    "flush, blank, words",
    [
        ("flush", "blank", None),
        ("flush", "no-blank", "its answer '=1 1' never ended (an answer ends with one empty line"),
        ("buffered", "blank", "nothing came on its stdout (an engine must flush its output"),
    ],
)
def test_a_missing_answer_says_what_the_engine_got_wrong(
    tmp_path: Path, flush: str, blank: str, words: str | None
) -> None:
    engine = script(tmp_path, "answers.py", ANSWERS)
    process = EngineProcess([sys.executable, str(engine), flush, blank])
    try:
        if words is None:  # the correct engine, for contrast
            assert process.call("protocol_version", 2.0).text == "1"
            return
        with pytest.raises(EngineError) as error:
            process.call("protocol_version", 1.0)
        assert str(error.value).startswith("the engine did not answer 'protocol_version' in time")
        assert words in str(error.value), error.value
        assert "docs/text-protocol.md, 'Framing'" in str(error.value)
    finally:
        process.close(quit_first=False, grace=0.5)


def check_error(engine: Path) -> str:
    """The one error line of ``cirulla bot check`` on the failing engine script ``engine``."""
    done = subprocess.run(
        [*CIRULLA, "bot", "check", f"text:{sys.executable} {engine}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stdout
    return errors[0]


def test_bot_check_of_an_engine_dying_at_start_quotes_its_stderr(tmp_path: Path) -> None:
    """The reason an engine gave on stderr is in the check's one error line (it was
    only "exited with code 3": the engine's own words went to a log nobody saw)."""
    engine = script(
        tmp_path,
        "dies.py",
        """
        import sys
        print("loading weights.bin", file=sys.stderr)
        sys.exit("my-engine: cannot open weights.bin")
        """,
    )
    errors = [check_error(engine)]
    assert "exited with code 1; its stderr ended: loading weights.bin | " in errors[0]
    assert errors[0].endswith("my-engine: cannot open weights.bin"), errors[0]


@pytest.mark.parametrize(
    "mode, argv, words",
    [
        (
            0o644,
            ["./engine.pl"],
            "(make it executable, chmod +x ./engine.pl, or name its interpreter first)",
        ),
        (0o755, ["engine.pl"], "(a command without a / is looked up on PATH: write ./engine.pl)"),
    ],
)
def test_an_engine_that_cannot_start_says_what_its_command_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int, argv: list[str], words: str
) -> None:
    """Permission denied on a script not made executable, and a file of the current
    folder named without ./ (looked up on PATH): the error says what to write."""
    monkeypatch.chdir(tmp_path)
    engine = script(tmp_path, "engine.pl", "print 1;\n")
    engine.chmod(mode)
    with pytest.raises(EngineError) as error:
        EngineProcess(argv)
    assert str(error.value).startswith(f"cannot start the engine {argv[0]}: [Errno")
    assert str(error.value).endswith(words), error.value


def test_the_stderr_quoted_at_exit_is_its_last_even_past_the_log_budget(tmp_path: Path) -> None:
    """Past the 1 MiB the bridge logs of an engine's stderr, it still reads the rest (to
    drain it); the exit message quotes the engine's last lines, not the budget's."""
    engine = script(
        tmp_path,
        "chatty.py",
        """
        import sys
        for i in range(20000):
            print("x" * 100, file=sys.stderr)
        sys.exit("chatty: the real reason")
        """,
    )
    errors = [check_error(engine)]
    assert errors[0].endswith("chatty: the real reason"), errors[0]
