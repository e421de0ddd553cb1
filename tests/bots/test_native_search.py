"""The compiled search takes one object (``compiled.NativeSearch``) and reads its fields by
name (``search_names`` in _search.c, parsed as keywords): the names must be the dataclass's
fields, each of the kind the C parsing reads; and ``mcts.search`` takes its options as one
``SearchConfig``, never as keyword overrides."""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import fields
from pathlib import Path
from typing import get_type_hints

from cirulla.bots.compiled import SEARCH_ARGUMENTS, NativeSearch
from cirulla.bots.mcts import SearchConfig, search

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "bots/cirulla/bots/_search.c"

#: PyArg_ParseTuple's format units -> the Python type a field of that unit has
UNIT_TYPES = {"d": float, "p": bool, "K": int, "L": int, "i": int}


def _c_format() -> str:
    source = SOURCE.read_text(encoding="utf-8")
    body = source[source.index("static PyObject *search_keywords(") :]
    found = re.search(r'PyArg_ParseTupleAndKeywords\(\s*args,\s*kwargs,\s*"([^"]*)"', body)
    assert found
    return found[1]


def _c_names() -> list[str]:
    source = SOURCE.read_text(encoding="utf-8")
    found = re.search(r"static char \*search_names\[\] = \{([^}]*)\}", source)
    assert found
    return re.findall(r'"(\w+)"', found[1])


def test_the_fields_are_the_names_the_c_search_reads() -> None:
    assert tuple(_c_names()) == SEARCH_ARGUMENTS == tuple(f.name for f in fields(NativeSearch))


def test_the_fields_are_of_the_kind_the_c_parsing_reads() -> None:
    units = [ch for ch in _c_format() if ch != "|"]
    assert len(units) == len(SEARCH_ARGUMENTS)
    hints = get_type_hints(NativeSearch)
    for name, unit in zip(_c_names(), units, strict=True):
        wanted = UNIT_TYPES.get(unit)
        if wanted is None:  # "O": a sequence or tuple the C code reads itself
            assert hints[name] not in (int, float, bool), f"{name}: {unit}"
        else:
            assert hints[name] is wanted, f"{name} is {hints[name]}, the C parsing reads {unit!r}"


def test_the_stub_takes_one_native_search() -> None:
    stub = ast.parse((ROOT / "bots/cirulla/bots/_search.pyi").read_text(encoding="utf-8"))
    (fn,) = (n for n in stub.body if isinstance(n, ast.FunctionDef) and n.name == "search")
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    assert (
        len(params) == 1 and ast.unparse(params[0].annotation or ast.Constant()) == "NativeSearch"
    )


def test_the_search_takes_its_options_as_one_config() -> None:
    params = inspect.signature(search).parameters
    assert get_type_hints(search)["config"] is SearchConfig
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
