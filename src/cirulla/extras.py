"""The optional parts of the install (pyproject.toml's extras), and the one line a command
prints when the part it needs is not installed.

The base install is the rules core, the bot kit and the protocol: a bot on a
player's machine needs no web, TUI or database library. The match server, the
tournament runner, the ladder, the terminal UI and the learning environments are extras.
A command that needs one checks it here before it starts, so a missing library is one
line naming the extra to install, never a traceback from deep inside an import.
tests/project/test_light_install.py checks this table against pyproject.toml and runs the core
commands where every extra's libraries refuse to import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

#: What each extra adds, as the import names of its libraries (an extra that includes
#: another lists only its own: ``INCLUDES`` gives the rest).
MODULES: dict[str, tuple[str, ...]] = {
    # the match server with health and reflection, its web view (--http; Starlette, uvicorn,
    # Jinja2 for its page templates), its Prometheus metrics (--metrics; the ladder's too)
    # and SQLAlchemy with its migrations (the ladder's database)
    "server": (
        "grpc_health",
        "grpc_reflection",
        "sqlalchemy",
        "alembic",
        "starlette",
        "uvicorn",
        "jinja2",
        "prometheus_client",
    ),
    # the tournament runner starts a local server and rates the bots (openskill)
    "tournament": ("openskill",),
    # the ladder: the runner's parts and PostgreSQL
    "ladder": ("psycopg",),
    # cirulla play and cirulla watch
    "tui": ("textual",),
    # the Gymnasium, PettingZoo and OpenSpiel environments (cirulla.env)
    "env": ("numpy", "gymnasium", "pettingzoo", "pyspiel"),
    # cirulla train: the learned bot's network, trained in NumPy alone
    "train": ("numpy",),
    # policy:model=PATH.onnx (an exported PyTorch or Stable-Baselines3 policy)
    "onnx": ("onnxruntime",),
}

#: Extras that include others (pyproject.toml: ``cirulla[server]`` among their entries).
INCLUDES: dict[str, tuple[str, ...]] = {
    "tournament": ("server",),
    "ladder": ("tournament",),
    "onnx": ("env",),
}


def install_hint(*extras: str) -> str:
    """How to add ``extras`` to an install. The package is not on a public index (and a
    package of that name there would be someone else's), so the hint is the clone's
    editable install; docs/install.md gives the wheel's form too."""
    return f"pip install -e '.[{','.join(extras)}]' in the clone (docs/install.md)"


class MissingExtraError(ImportError):
    """A command needs extras that are not installed; ``str()`` is the line to print
    after ``cirulla COMMAND: ``."""

    def __init__(self, extras: Iterable[str]) -> None:
        self.extras = tuple(extras)
        names = " and ".join(self.extras)
        plural = "extras" if len(self.extras) > 1 else "extra"
        super().__init__(f"needs the {names} {plural}: {install_hint(*self.extras)}")


def modules_of(extra: str) -> tuple[str, ...]:
    """Every import name ``extra`` provides, those of the extras it includes first."""
    if extra not in MODULES:
        raise KeyError(f"no extra {extra!r} (extras: {', '.join(MODULES)})")
    included = (m for inner in INCLUDES.get(extra, ()) for m in modules_of(inner))
    return (*included, *MODULES[extra])


def importable(module: str) -> bool:
    """Whether ``module`` (a top-level name) is installed, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(extra: str) -> list[str]:
    """The import names of ``extra`` that are not installed (empty: the extra is there)."""
    return [m for m in modules_of(extra) if not importable(m)]


def require(*extras: str) -> None:
    """Raise :class:`MissingExtraError` naming those of ``extras`` not fully installed."""
    absent = [extra for extra in extras if missing(extra)]
    if absent:
        raise MissingExtraError(absent)


def extra_of(module: str | None) -> str | None:
    """The extra that provides ``module`` (any dotted name), or None for anything else."""
    top = (module or "").split(".")[0]
    return next((extra for extra, names in MODULES.items() if top in names), None)
