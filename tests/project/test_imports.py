"""Imports inside functions hide the edges between modules (a reader of the top of a file
no longer sees what it needs) and hide import circles. They are allowed where they keep
an optional extra optional: a module of an extra (``cirulla.extras.MODULES``), imported
when the feature that needs it runs. The others are counted per area against a ceiling
that may only go down (issue 41): move one to the top of its module when that makes no
import circle and does not slow the ``cirulla`` command's start
(tests/project/test_cli_dispatch.py), then lower the ceiling here."""

from __future__ import annotations

import ast
from pathlib import Path

from cirulla.extras import MODULES

ROOT = Path(__file__).resolve().parents[2]
AREAS = ("src", "rules", "server", "bots", "clients", "ladder", "env")

#: Libraries of the extras, and those a bot of another venv brings (torch).
OPTIONAL = {name for names in MODULES.values() for name in names} | {"torch", "onnx"}

#: Imports inside functions, other than of an optional library, per area: a ceiling.
CEILINGS = {
    "bots": 4,
    "clients": 11,
    "env": 3,
    "ladder": 23,
    "rules": 2,
    "server": 4,
    "src": 0,
}


def inner_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import below the module level: in a function or a method."""
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            below = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if inside and isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            elif inside and isinstance(child, ast.ImportFrom):
                found.append((child.lineno, "." * child.level + (child.module or "")))
            walk(child, below)

    walk(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def counted() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {area: [] for area in AREAS}
    for area in AREAS:
        for path in sorted((ROOT / area).rglob("*.py")):
            if "v1" in path.relative_to(ROOT / area).parts:  # generated protocol code
                continue
            for line, module in inner_imports(path):
                if module.split(".")[0] not in OPTIONAL:
                    out[area].append(f"{path.relative_to(ROOT)}:{line}: {module}")
    return out


def test_imports_inside_functions_only_keep_an_extra_optional() -> None:
    over = {
        area: f"{len(found)} > {CEILINGS[area]}"
        for area, found in counted().items()
        if len(found) > CEILINGS[area]
    }
    assert not over, (
        f"imports inside functions, other than of an optional extra, over the ceiling: {over} "
        "(move the new one to the top of its module)"
    )


def test_the_optional_libraries_are_the_extras() -> None:
    assert {"numpy", "sqlalchemy", "textual", "onnxruntime"} <= OPTIONAL
