"""How a subcommand's parser names the function that runs it, without importing it.

An area's command module (``cirulla.ladder.cli``, ...) builds its parsers from light
modules only, and gives each subcommand ``func=Runs("cirulla.ladder.cli_author",
"run_history")``: the module that runs the command, and its function. The module is
imported when the command runs (``cirulla.cli.main`` calls ``args.func(args)``), so
``cirulla ladder add`` does not import what ``serve``, ``history`` or ``logs`` need, and
``cirulla ladder add --help`` imports none of them: every ``cirulla`` process pays at
start for the commands it does not run otherwise (the test suite starts a few hundred).

This is the one way a subcommand is registered lazily, and it is not a hidden import:
both names are string literals, which the import checks read as an edge from the module
that writes the ``Runs`` to the module it names (tests/project/test_circles.py,
tests/project/test_layout.py), and tests/project/test_cli_dispatch.py resolves every
``Runs`` of the parser tree. A parser may still give a function itself (``func=f``)
when importing it costs nothing the command would not pay anyway.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast


@dataclass(frozen=True)
class Runs:
    """The function ``function`` of module ``module`` (dotted name), called with the
    parsed arguments; returns the command's exit status (None: 0)."""

    module: str
    function: str

    def target(self) -> object:
        """Import the module and return what it names (AttributeError if it has none):
        a command's function, or anything else named lazily this way (a bot kind's policy
        constructor, ``cirulla.bots.specs``)."""
        return getattr(importlib.import_module(self.module), self.function)

    def resolve(self) -> Callable[[argparse.Namespace], int | None]:
        """``target``, a command's function."""
        return cast(Callable[[argparse.Namespace], int | None], self.target())

    def __call__(self, args: argparse.Namespace) -> int | None:
        return self.resolve()(args)
