"""The four native modules' type stubs (``_native.pyi``, ``_search.pyi``, ``_decode.pyi``,
``_native.pyi`` beside each C source) against the modules themselves: mypy checks every
caller against the stubs, so a stub that drifts from its module would let a wrong call
through.

Checked here: the same public names both ways (functions, classes, their methods); each
callable's parameters against the signature its docstring gives and, from the C source,
against the number of arguments its argument parsing takes (required and in all) or the
keyword names it accepts; and the parameter names of the functions that mirror a Python
reference against that reference's.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from cirulla.bots import heuristic, inference
from cirulla.rules import actions, captures, game, scoring

ROOT = Path(__file__).resolve().parents[2]

#: module -> (its stub, its C source)
MODULES = {
    "cirulla.rules._native": ("rules/cirulla/rules/_native.pyi", "rules/cirulla/rules/_native.c"),
    "cirulla.bots._search": ("bots/cirulla/bots/_search.pyi", "bots/cirulla/bots/_search.c"),
    "cirulla.bots._decode": ("bots/cirulla/bots/_decode.pyi", "bots/cirulla/bots/_decode.c"),
    "cirulla.env._native": ("env/cirulla/env/_native.pyi", "env/cirulla/env/_native_env.c"),
}

#: native function -> (its Python reference, the native-only parameters it takes first)
REFERENCES: dict[tuple[str, str], tuple[Callable[..., object], tuple[str, ...]]] = {
    ("cirulla.rules._native", "captures"): (captures.legal_captures, ()),
    ("cirulla.rules._native", "declaration_codes"): (actions.declaration_codes, ()),
    ("cirulla.rules._native", "dealer_bonus"): (game.dealer_bonus, ()),
    ("cirulla.rules._native", "score_deal"): (scoring.score_deal, ()),
    ("cirulla.bots._search", "violations"): (inference.violations, ()),
    ("cirulla.bots._search", "reply_worth"): (heuristic.reply_worth, ("worth", "scopa")),
}

#: methods every class has (object's), or that the stub need not list
_INHERITED = set(dir(object))


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not built (no C compiler at install)")


def _stub(name: str) -> ast.Module:
    return ast.parse((ROOT / MODULES[name][0]).read_text(encoding="utf-8"))


def _params(fn: ast.FunctionDef) -> list[tuple[str, bool]]:
    """(name, has a default) of each parameter, a method's ``self`` (``cls``) aside."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [False] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
    out = list(zip((p.arg for p in positional), defaults, strict=True))
    out += [(k.arg, d is not None) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    bound = "cls" if fn.name == "__new__" else "self"
    return out[1:] if out and out[0][0] == bound else out


def _stub_callables(name: str) -> dict[str, ast.FunctionDef]:
    """``name`` and ``Class.method`` -> the stub's def (a class as its __init__/__new__)."""
    out: dict[str, ast.FunctionDef] = {}
    for node in _stub(name).body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    key = node.name if item.name in ("__init__", "__new__") else item.name
                    out[key if key == node.name else f"{node.name}.{key}"] = item
    return out


def _stub_classes(name: str) -> set[str]:
    return {node.name for node in _stub(name).body if isinstance(node, ast.ClassDef)}


def _stub_constants(name: str) -> dict[str, str]:
    """The stub's module-level ``NAME: type`` lines -> their type's text."""
    return {
        node.target.id: ast.unparse(node.annotation)
        for node in _stub(name).body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


def _public(name: str) -> set[str]:
    module = _module(name)
    out = set()
    for attr in dir(module):
        if attr.startswith("_"):
            continue
        out.add(attr)
        value = getattr(module, attr)
        if isinstance(value, type):
            out |= {f"{attr}.{m}" for m in vars(value) if m not in _INHERITED}
    return out


def _documented(doc: str | None, name: str) -> list[tuple[str, bool]] | None:
    """The parameters a docstring's leading ``name(a, b=1)`` gives, or None."""
    first = (doc or "").split("\n")[0]
    found = re.match(rf"{re.escape(name)}\((.*?)\)(?:\s*->|:|\.|$)", first)
    if not found:
        return None
    parts = [p.strip() for p in found[1].split(",") if p.strip()]
    return [(p.split("=")[0].strip(), "=" in p) for p in parts]


def _tables(source: str) -> dict[str, dict[str, tuple[str, str]]]:
    """Each PyMethodDef table: python name -> (C function, METH_ flags)."""
    entry = r'\{\s*"(\w+)",\s*(?:\(PyCFunction\)(?:\(void \(\*\)\(void\)\))?)?(\w+),\s*([\w| ]+),'
    return {
        table: {py: (c, flags) for py, c, flags in re.findall(entry, body)}
        for table, body in re.findall(r"static PyMethodDef (\w+)\[\] = \{(.*?)\};", source, re.S)
    }


def _table_of(source: str, module: str, key: str) -> dict[str, tuple[str, str]]:
    """The method table of the module (``m_methods``) or of the class ``key`` names."""
    tables = _tables(source)
    if "." not in key:
        found = re.search(r"\.m_methods = (\w+)", source)
        assert found
        return tables[found[1]]
    cls = key.split(".")[0]
    found = re.search(
        rf'tp_name = "{re.escape(module)}\.{cls}".*?\.tp_methods = (\w+)', source, re.S
    )
    assert found, key
    return tables[found[1]]


def _is_attribute(decorator: ast.expr) -> bool:
    """``@property`` or ``@name.setter``: the stub's way to type a C type's attribute."""
    if isinstance(decorator, ast.Name):
        return decorator.id == "property"
    return isinstance(decorator, ast.Attribute) and decorator.attr == "setter"


def _c_source(name: str) -> str:
    """The module's C source with the headers of its own folder it includes."""
    path = ROOT / MODULES[name][1]
    source = path.read_text(encoding="utf-8")
    for header in re.findall(r'^#include "(\w+\.h)"', source, re.M):
        source += (path.parent / header).read_text(encoding="utf-8")
    return source


def _c_body(source: str, cfunc: str) -> str:
    start = re.search(rf"^static \w+ \*?{cfunc}\(", source, re.M)
    assert start, cfunc
    end = source.index("\n}\n", start.start())
    return source[start.start() : end]


def _format_arity(fmt: str) -> tuple[int, int]:
    """(required, in all) arguments a PyArg_ParseTuple format takes."""
    required, total, optional = 0, 0, False
    for ch in fmt.split(":")[0].split(";")[0]:  # the function's name or message after
        if ch == "|":
            optional = True
        elif ch.isalpha():
            total += 1
            required += not optional
    return required, total


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_stub_names_what_the_module_has(name: str) -> None:
    constants = {k: v for k, v in _stub_constants(name).items() if not k.startswith("_")}
    stubbed = set(_stub_callables(name)) | _stub_classes(name) | set(constants)
    built = _public(name)
    assert built - stubbed == set(), f"{name}: not in its stub"
    assert stubbed - built == set(), f"{name}: in the stub, not in the module"
    for constant, annotation in constants.items():
        value = getattr(_module(name), constant)
        assert type(value).__name__ == annotation, (constant, annotation, value)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_stub_parameters_are_the_documented_ones(name: str) -> None:
    module = _module(name)
    checked = 0
    for key, fn in _stub_callables(name).items():
        obj = module
        for part in key.split("."):
            obj = getattr(obj, part)
        documented = _documented(obj.__doc__, key.split(".")[-1])
        if documented is None:
            continue
        params = _params(fn)
        if not any(default for _, default in documented):  # a doc that shows no defaults
            params = [(p, False) for p, _ in params]  # (the C source's arity test checks them)
        assert params == documented, f"{name}.{key}: stub {params} != doc {documented}"
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_stub_arity_is_what_the_c_source_parses(name: str) -> None:
    """Each C function's argument parsing: ``METH_NOARGS`` none, ``METH_O`` one,
    ``METH_VARARGS`` its format string's units (``|`` starts the optional ones), a
    constructor the keyword names of its ``PyArg_ParseTupleAndKeywords``."""
    source = _c_source(name)
    for key, fn in _stub_callables(name).items():
        params = _params(fn)
        if "." not in key and key[0].isupper():  # a class: its constructor's keywords
            block = re.search(rf'tp_name = "{re.escape(name)}\.{key}"(.*?)\}};', source, re.S)
            assert block, key
            init = re.search(r"\.tp_init = \(\w+\)(\w+)", block[1]) or re.search(
                r"\.tp_new = (\w+)", block[1]
            )
            assert init, key
            body = _c_body(source, init[1])
            names = re.search(r"static char \*names\[\] = \{([^}]*)\}", body)
            assert names, key
            keywords = re.findall(r'"(\w+)"', names[1])
            assert [p for p, _ in params] == keywords, f"{name}.{key}: {params} != {keywords}"
            continue
        if any(_is_attribute(d) for d in fn.decorator_list):
            # a property: a member of the C struct (PyMemberDef) or a getter (PyGetSetDef,
            # its setter too if the stub has one), read without arguments
            members = set(re.findall(r'\{"(\w+)", T_\w+, offsetof\(', source))
            getters = re.findall(r'\{"(\w+)", \(getter\)\w+, (\(setter\)\w+|NULL)', source)
            getters += re.findall(r'^\s*(?:ZONE|SCALAR)\("(\w+)", \w+\)(,)', source, re.M)
            settable = {n for n, setter in getters if setter != "NULL"}
            attr = key.split(".")[-1]
            assert attr in members | {n for n, _ in getters}, f"{name}.{key}: not in the C source"
            if any(isinstance(d, ast.Attribute) for d in fn.decorator_list):
                assert attr in members | settable, f"{name}.{key}: no setter in the C source"
            continue
        if key.split(".")[-1].startswith("__"):  # a type slot (sq_length, nb_add, ...)
            continue
        cfunc, flags = _table_of(source, name, key)[key.split(".")[-1]]
        if "METH_NOARGS" in flags:
            expected = (0, 0)
        elif "METH_O" in flags and "METH_VARARGS" not in flags:
            expected = (1, 1)
        elif "METH_FASTCALL" in flags:  # its own count check: nargs < required || > all
            body = _c_body(source, cfunc)
            count = re.search(r"nargs(?: \+ nkw)? < (\d+) \|\| nargs(?: \+ nkw)? > (\d+)", body)
            assert count, f"{name}.{key}: no argument count check in {cfunc}"
            expected = (int(count[1]), int(count[2]))
        else:
            fmt = re.search(
                r'PyArg_ParseTuple(?:AndKeywords)?\(\s*args,\s*(?:kw,\s*)?"([^"]*)"',
                _c_body(source, cfunc),
            )
            assert fmt, f"{name}.{key}: no PyArg_ParseTuple in {cfunc}"
            expected = _format_arity(fmt[1])
        got = (sum(not d for _, d in params), len(params))
        assert got == expected, f"{name}.{key}: stub (required, all) {got}, C {expected}"


@pytest.mark.parametrize(("native", "reference"), sorted(REFERENCES, key=str), ids=str)
def test_the_stub_names_the_reference_parameters(native: str, reference: str) -> None:
    fn = _stub_callables(native)[reference]
    python, extra = REFERENCES[(native, reference)]
    expected = [*extra, *inspect.signature(python).parameters]
    assert [p for p, _ in _params(fn)] == expected
