"""``cirulla COMMAND`` imports only the area that registers COMMAND: a server, a runner or
a per-game bot does not pay at start for every other area's imports."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from cirulla.cli import AREAS, COMMAND_AREAS, build_parser


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
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
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
