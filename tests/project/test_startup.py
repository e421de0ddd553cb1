"""What a process imports at its start: no library of an extra it does not use.

The suite starts some hundreds of processes (commands, bots, servers, ladders, workers)
and a user feels every start: importing Gymnasium and NumPy costs a process about 0.3 s of
CPU, SQLAlchemy 0.4 s, Alembic 0.1-0.3 s more (docs/performance-log.md, "Start-up"). Each
check below probes a fresh interpreter, so a new top-level import anywhere on these paths
fails here instead of slowing every start silently. tests/project/test_cli_dispatch.py
checks which of the project's own modules each command imports.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Libraries of the extras (pyproject.toml) that cost a start the most.
EXTRAS_LIBRARIES = (
    "gymnasium",
    "numpy",
    "pettingzoo",
    "pyspiel",
    "onnxruntime",
    "torch",
    "sqlalchemy",
    "alembic",
    "textual",
    "starlette",
    "uvicorn",
)

PROBE = """
import sys
{body}
print("loaded:" + ",".join(m for m in {libraries!r} if m in sys.modules))
"""

HELP = """
from cirulla.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
"""


def loaded(body: str, libraries: tuple[str, ...] = EXTRAS_LIBRARIES) -> set[str]:
    """Which of ``libraries`` a fresh interpreter has imported after running ``body``."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body, libraries=libraries)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("loaded:"), proc.stdout[-300:] + proc.stderr[-300:]
    return set(filter(None, last.removeprefix("loaded:").split(",")))


def test_the_whole_help_imports_no_library_of_an_extra() -> None:
    """``cirulla --help`` builds every area's parsers, so this covers each command's own
    ``--help`` too. It imported Gymnasium and NumPy (``bench env``'s parser was inside the
    ``cirulla.env`` package, which registers its Gymnasium id on import)."""
    assert loaded(HELP.format(argv=["--help"])) == set()


def test_a_bot_process_imports_no_library_of_an_extra() -> None:
    """``python -m cirulla.bots.loop SPEC``, how the runners start every built-in bot."""
    assert loaded("import cirulla.bots.loop") == set()


def test_a_bot_process_imports_no_search_until_a_search_bot_is_made() -> None:
    """The kinds' registry names the MCTS kind's factory by module (``Runs``): a random or
    greedy bot's process imports neither the search nor the endgame solver nor the
    inference (about a tenth of its start); making an MCTS bot imports them."""
    search = (
        "cirulla.bots.mcts",
        "cirulla.bots.mcts_policy",
        "cirulla.bots.endgame",
        "cirulla.bots.inference",
    )
    assert loaded("import cirulla.bots.loop", search) == set()
    made = "from cirulla.bots.specs import make_policy\nmake_policy('mcts')"
    assert loaded(made, search) == set(search)


def test_a_match_server_imports_prometheus_only_to_serve_metrics() -> None:
    """Every ``cirulla server``, tournament runner, ladder and worker hosts a match server;
    prometheus-client and its HTTP server are imported when ``--metrics`` starts the
    endpoint (``cirulla.server.metrics_export``), not by every start."""
    libraries = ("prometheus_client", "wsgiref.simple_server")
    body = "import cirulla.server.app, cirulla.clients.tournament.runner"
    assert loaded(body, libraries) == set()
    serving = "from cirulla.server.metrics import start_metrics\nstart_metrics('127.0.0.1:0')"
    assert loaded(serving, libraries) == set(libraries)


def test_binding_the_installation_imports_no_environment() -> None:
    """A sandbox binds the project's packages read-only; finding where ``cirulla.env``
    lives imported it, and so Gymnasium and NumPy, in every ladder and tournament runner."""
    body = (
        "from cirulla.clients.matches.binds import install_binds, python_paths\n"
        "assert any(str(p).endswith('env') for p in python_paths()), python_paths()\n"
        "install_binds()"
    )
    assert loaded(body) & {"gymnasium", "numpy"} == set()


def test_a_database_at_its_newest_revision_opens_without_alembic(tmp_path: Path) -> None:
    """Every ladder, worker and ``cirulla ladder`` command opens the database through the
    migrations; one already at the head needs no Alembic (the first open migrates)."""
    from alembic.script import ScriptDirectory

    from cirulla.ladder.database import alembic_config, head_revision

    assert head_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()
    db = tmp_path / "ladder.sqlite3"
    body = f"from cirulla.ladder.database import open_database\nopen_database({str(db)!r})"
    assert "alembic" in loaded(body)  # a new file: migrated
    assert loaded(body, ("alembic", "sqlalchemy")) == {"sqlalchemy"}  # at the head
    read = f"from cirulla.ladder.database import open_current\nopen_current({str(db)!r})"
    assert loaded(read, ("alembic",)) == set()
