"""The compiled search's arguments are named once (``compiled.NativeSearch``) and unpacked in
one place (``compiled.run_search``): their order must be the one _search.c's argument parsing
reads, and ``mcts.search``'s keyword overrides the fields of ``SearchConfig``."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path
from typing import get_type_hints

from cirulla.bots.compiled import SEARCH_ARGUMENTS, NativeSearch
from cirulla.bots.mcts import SearchConfig, SearchOverrides

ROOT = Path(__file__).resolve().parents[2]

#: PyArg_ParseTuple's format units -> the Python type a field of that unit has
UNIT_TYPES = {"d": float, "p": bool, "K": int, "L": int, "i": int}


def _c_format() -> str:
    source = (ROOT / "bots/cirulla/bots/_search.c").read_text(encoding="utf-8")
    body = source[source.index("static PyObject *py_search(") :]
    found = re.search(r'PyArg_ParseTuple\(\s*args,\s*"([^"]*)"', body)
    assert found
    return found[1]


def test_the_fields_are_in_the_order_the_c_parsing_reads() -> None:
    units = [ch for ch in _c_format() if ch != "|"]
    assert len(units) == len(SEARCH_ARGUMENTS)
    hints = get_type_hints(NativeSearch)
    for name, unit in zip(SEARCH_ARGUMENTS, units, strict=True):
        wanted = UNIT_TYPES.get(unit)
        if wanted is None:  # "O": a sequence or tuple the C code reads itself
            assert hints[name] not in (int, float, bool), f"{name}: {unit}"
        else:
            assert hints[name] is wanted, f"{name} is {hints[name]}, the C parsing reads {unit!r}"


def test_the_fields_are_the_stubs_parameters() -> None:
    stub = ast.parse((ROOT / "bots/cirulla/bots/_search.pyi").read_text(encoding="utf-8"))
    (search,) = (n for n in stub.body if isinstance(n, ast.FunctionDef) and n.name == "search")
    params = [a.arg for a in (*search.args.posonlyargs, *search.args.args)]
    assert tuple(params) == SEARCH_ARGUMENTS == tuple(f.name for f in fields(NativeSearch))


def test_the_keyword_overrides_are_the_config_fields() -> None:
    config = get_type_hints(SearchConfig)
    assert get_type_hints(SearchOverrides) == config
    assert list(SearchOverrides.__annotations__) == [f.name for f in fields(SearchConfig)]
