"""The rules core's running examples (its docstrings' ``>>>`` lines, in the manner of
python-chess) are executed, so the documentation cannot drift from the code."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import cirulla.rules

MODULES = sorted(
    name
    for _, name, _ in pkgutil.iter_modules(cirulla.rules.__path__, "cirulla.rules.")
    if not name.endswith("_native")
)
#: Modules whose docstrings carry examples; a module listed here that loses them fails.
WITH_EXAMPLES = {"actions", "captures", "cards", "game", "options"}


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_each_rules_module_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed (see output above)"
    if name.rsplit(".", 1)[1] in WITH_EXAMPLES:
        assert result.attempted >= 2, f"{name} lost its examples"


def test_the_examples_hold_on_the_python_core_too() -> None:
    import subprocess
    import sys

    code = (
        "import doctest, cirulla.rules.game as g, cirulla.rules.core as c; "
        "assert c.CORE == 'python', c.CORE; "
        "r = doctest.testmod(g, optionflags=doctest.ELLIPSIS); "
        "raise SystemExit(1 if r.failed or not r.attempted else 0)"
    )
    env = {"CIRULLA_CORE": "python", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
