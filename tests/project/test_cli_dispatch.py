"""``cirulla COMMAND`` imports only the area that registers COMMAND: a server, a runner or
a per-game bot does not pay at start for every other area's imports."""

from __future__ import annotations

import argparse
import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from cirulla.bots.specs import KINDS
from cirulla.cli import AREAS, COMMAND_AREAS, areas_for, build_parser
from cirulla.runs import Runs
from tests.project.test_imports import ROOT, project_modules, runs_calls


def test_the_command_table_is_what_the_areas_register() -> None:
    registered: dict[str, str] = {}
    for area in AREAS:
        commands = argparse.ArgumentParser().add_subparsers()
        bench = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(area).register(commands, bench)
        registered.update(dict.fromkeys(commands.choices, area))
    assert registered == COMMAND_AREAS


def test_full_help_still_lists_every_command() -> None:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == set(COMMAND_AREAS) | {"bench"}


HEAVY = (
    "cirulla.bots.kit",
    "cirulla.clients.tournament.runner",
    "cirulla.clients.tournament.bench",
)
PROBE = """
import sys
from cirulla.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("imported:" + ",".join(m for m in {heavy!r} if m in sys.modules))
"""


def imported(*argv: str) -> set[str]:
    return imported_of(HEAVY, *argv)


def imported_of(modules: tuple[str, ...], *argv: str, cwd: Path | None = None) -> set[str]:
    """Which of ``modules`` ``cirulla ARGV`` (run in ``cwd``) has imported when it returns."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=modules), *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("imported:"), proc.stdout[-300:]
    return set(filter(None, last.removeprefix("imported:").split(",")))


def test_a_command_imports_its_own_area_only() -> None:
    assert imported("server", "--help") == set()
    assert imported("rules", "options") == set()
    assert imported("play", "--help") == set()
    assert "cirulla.bots.kit" not in imported("tournament", "--help")
    assert "cirulla.clients.tournament.runner" not in imported("bot", "--help")
    # the version alone needs none (it printed after importing all of them: 0.4 s)
    assert imported("--version") == set()
    # help and bench need every area
    assert imported("--help") == set(HEAVY)


EXTRA_PROBE = """
import sys
from cirulla.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("loaded:" + ",".join(m for m in ("numpy", "sqlalchemy", "textual") if m in sys.modules))
"""


def test_a_built_in_bot_starts_without_the_libraries_of_an_extra() -> None:
    """A per-game bot process, and a seat reconnecting after a dropped stream (it has one
    second to be back), start without NumPy: only the learned kinds and a search guided
    by the network load it, when such a bot is made (tests/confinement/
    test_rename_on_resume.py failed when every bot's start paid for it)."""
    for kind in ("random", "greedy", "mcts"):
        proc = subprocess.run(
            [sys.executable, "-c", EXTRA_PROBE, "bot", kind, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert proc.stdout.splitlines()[-1] == "loaded:", (kind, proc.stdout[-300:])


def _parsers(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the tree under ``parser``, with the words that reach it."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*words, name))


def _written_runs() -> dict[Runs, str]:
    """Every ``Runs(...)`` in the project's code, with where it is written."""
    found: dict[Runs, str] = {}
    for path in project_modules().values():
        if path.suffix != ".py":
            continue
        for call in runs_calls(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ROOT)}:{call.lineno}"
            literal = [a.value for a in call.args if isinstance(a, ast.Constant)]
            assert len(call.args) == 2 and not call.keywords, where
            assert all(isinstance(v, str) for v in literal) and len(literal) == 2, (
                f"{where}: write Runs('module', 'function') with literal names, so that the "
                "import checks see the edge (src/cirulla/runs.py)"
            )
            found[Runs(str(literal[0]), str(literal[1]))] = where
    return found


def test_every_runs_names_a_function_of_a_module() -> None:
    """A subcommand's ``Runs`` is written with two literals (what test_circles and
    test_layout read as an import), and names a function that exists: a typo fails here,
    not when someone first runs the command."""
    written = _written_runs()
    assert written, "no Runs found: the scan is broken"
    for runs, where in written.items():
        assert callable(runs.resolve()), where


def test_the_parser_tree_runs_only_what_is_written() -> None:
    """Every ``Runs`` of the whole parser tree is one written in the code (none built from
    a computed name the checks cannot read), and every one written is used: by a parser,
    or as a bot kind's factory (``cirulla.bots.specs.KINDS``, the search's modules
    imported when such a bot is made)."""
    in_tree = {
        parser.get_default("func")
        for _, parser in _parsers(build_parser())
        if isinstance(parser.get_default("func"), Runs)
    }
    factories = {kind.factory for kind in KINDS.values() if isinstance(kind.factory, Runs)}
    assert factories and not in_tree & factories
    assert in_tree | factories == set(_written_runs())


def test_a_command_alone_has_the_help_it_has_in_the_whole_tree() -> None:
    """``cirulla COMMAND ...`` builds its own area's parsers only (``areas_for``): each of its
    parsers' help is the one ``cirulla --help``'s whole tree has, word for word."""
    whole = {words: p.format_help() for words, p in _parsers(build_parser())}
    for command in COMMAND_AREAS:
        alone = {
            words: p.format_help()
            for words, p in _parsers(build_parser(areas_for([command])))
            if words[:1] == (command,)
        }
        assert alone == {w: h for w, h in whole.items() if w[:1] == (command,)}, command


def test_a_ladder_command_imports_only_what_it_runs() -> None:
    """``cirulla ladder add --help`` builds every ladder parser without importing the
    ladder's client, server or worker code (they cost it 0.3 s of its 0.42 s, and the suite
    starts a ladder command a few hundred times)."""
    code = (
        "cirulla.ladder.cli_client",
        "cirulla.ladder.cli_operator",
        "cirulla.ladder.cli_author",
        "cirulla.ladder.cli_own_bot",
        "cirulla.ladder.cli_serve",
        "cirulla.ladder.worker",
        "grpc",
    )
    assert imported_of(code, "ladder", "add", "--help") == set()
    assert imported_of(code, "ladder", "--help") == set()


def test_a_ladder_client_command_imports_no_results_journal_and_no_bot_kinds(
    tmp_path: Path,
) -> None:
    """A client command (here one that finds no ladder: the same start) prints a match's
    outcomes and the protocol's words without the tournament's results journal, the
    ladder's store-side messages and, through them, every bot kind (~0.1 s of its start)."""
    heavy = (
        "cirulla.clients.matches.journal",
        "cirulla.ladder.messages",
        "cirulla.bots.specs",
    )
    args = ("ladder", "history", "nobody", "--server", "127.0.0.1:1")
    assert imported_of(heavy, *args, cwd=tmp_path) == set()


def test_a_ladder_without_http_starts_without_the_web_view() -> None:
    """``cirulla ladder serve`` (every ladder test starts one) loads the web view's
    libraries only with --http, as the match server does (they were 0.1 s of its start)."""
    code = (
        "import sys, cirulla.ladder.cli_serve, cirulla.ladder.serve; "
        "print(','.join(m for m in ('starlette', 'uvicorn', 'jinja2') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == ""
