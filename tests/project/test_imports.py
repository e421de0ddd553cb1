"""Imports inside functions hide the edges between modules (a reader of the top of a file
no longer sees what it needs) and hide import circles. They are allowed where they keep
an optional extra optional: a module of an extra (``cirulla.extras.MODULES``), imported
when the feature that needs it runs, or a module of the project that loads one (at its
top, directly or through the modules it imports) when the module around the import does
not: the ladder's store behind SQLAlchemy, the terminal UI behind Textual. That is also
what keeps the ``cirulla`` command's start light (tests/project/test_cli_dispatch.py): a
command registers its subcommands from light modules, and the body of one (``cirulla
ladder serve``, a read of the ladder's database, ``cirulla tournament --db``) loads its
extra's libraries when it runs; SQLAlchemy alone takes about a second to import on a
busy machine. An import of a module whose libraries the module around it has loaded
already saves nothing: it is counted.

There are no others (issue 41): an import that keeps no extra optional goes to the top of
its module; if that makes an import circle, break the circle
(tests/project/test_circles.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from cirulla.extras import MODULES

ROOT = Path(__file__).resolve().parents[2]
AREAS = ("src", "rules", "server", "bots", "clients", "ladder", "env")

#: Libraries of the extras, and those a bot of another venv brings (torch).
OPTIONAL = {name for names in MODULES.values() for name in names} | {"torch", "onnx"}


def inner_import_nodes(tree: ast.Module) -> list[tuple[int, ast.Import | ast.ImportFrom]]:
    """(line, statement) of every import below the module level: in a function or a method."""
    found: list[tuple[int, ast.Import | ast.ImportFrom]] = []

    def walk(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            below = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child.lineno, child))
            walk(child, below)

    walk(tree, False)
    return found


def _top_level(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports that run when the module is imported: not in a function, not under
    ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(nodes: list[ast.stmt] | list[ast.AST]) -> None:
        for child in nodes:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                walk(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            walk(list(ast.iter_child_nodes(child)))

    walk(tree.body)
    return found


def runs_calls(tree: ast.AST) -> list[ast.Call]:
    """Every ``Runs(...)`` call in ``tree``: a subcommand naming the function that runs it
    (``cirulla.runs.Runs``), imported when the command runs."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "Runs")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Runs")
        )
    ]


def runs_targets(tree: ast.AST) -> set[str]:
    """The modules the ``Runs("module", "function")`` calls of ``tree`` name. They are
    imports that run later, not at the top: the circle and layering checks
    (tests/project/test_circles.py, test_layout.py) count each as an import of that module
    by the module that writes it, as if it were an import inside a function;
    tests/project/test_cli_dispatch.py holds every ``Runs`` to string literals."""
    return {
        call.args[0].value
        for call in runs_calls(tree)
        if call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    }


def project_modules() -> dict[str, Path]:
    """Every module of the project by name; a compiled one by its stub (``_native.pyi``):
    it imports nothing of the project, and loads no library of an extra."""
    found: dict[str, Path] = {}
    for area in AREAS:
        for path in [*(ROOT / area).rglob("*.py"), *(ROOT / area).rglob("_*.pyi")]:
            parts = list(path.relative_to(ROOT / area).with_suffix("").parts)
            if "v1" in parts or "__pycache__" in parts:
                continue  # generated protocol code
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


class Loads:
    """The libraries outside the project that importing a module of the project loads:
    its top-level imports, followed through the project's modules (and their packages)."""

    def __init__(self) -> None:
        self.modules = project_modules()
        self.memo: dict[str, frozenset[str]] = {}

    def targets(self, module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
        """What ``node`` (in ``module``) imports: project modules by name, other
        libraries by their top-level name."""
        path = self.modules.get(module)
        package = (
            module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]
        )
        if isinstance(node, ast.Import):
            names = {alias.name for alias in node.names}
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = {f"{base}.{alias.name}" for alias in node.names} | {base}
        out = set()
        for name in names:
            if not name.startswith("cirulla"):
                out.add(name.split(".")[0])
                continue
            while name and name not in self.modules:
                name = name.rpartition(".")[0]
            parts = name.split(".")
            out |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)}  # and its packages
        return out

    def of(self, target: str) -> frozenset[str]:
        if not target.startswith("cirulla"):
            return frozenset({target})
        if target in self.memo:
            return self.memo[target]
        self.memo[target] = frozenset()  # a circle adds nothing more
        path = self.modules.get(target)
        found: set[str] = set()
        if path is not None and path.suffix == ".py":
            for node in _top_level(ast.parse(path.read_text(encoding="utf-8"))):
                for name in self.targets(target, node):
                    found |= self.of(name)
        self.memo[target] = frozenset(found)
        return self.memo[target]


def keeps_an_extra_optional(loads: Loads, module: str, imported: set[str]) -> bool:
    """Whether importing ``imported`` inside a function of ``module`` loads an optional
    library that ``module`` itself does not load."""
    if any(name.split(".")[0] in OPTIONAL for name in imported):
        return True
    extra = {lib for name in imported for lib in loads.of(name)} & OPTIONAL
    return bool(extra - loads.of(module))


def counted() -> dict[str, list[str]]:
    loads = Loads()
    names = {path: name for name, path in loads.modules.items()}
    out: dict[str, list[str]] = {area: [] for area in AREAS}
    for area in AREAS:
        for path in sorted((ROOT / area).rglob("*.py")):
            if "v1" in path.relative_to(ROOT / area).parts:  # generated protocol code
                continue
            module = names[path]
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, node in inner_import_nodes(tree):
                if not keeps_an_extra_optional(loads, module, loads.targets(module, node)):
                    what = ast.unparse(node).removeprefix("from ").removeprefix("import ")
                    out[area].append(f"{path.relative_to(ROOT)}:{line}: {what}")
    return out


def test_imports_inside_functions_only_keep_an_extra_optional() -> None:
    found = [line for lines in counted().values() for line in lines]
    assert not found, (
        "imports inside functions that keep no extra optional (move them to the top of "
        "their modules):\n" + "\n".join(found)
    )


def test_the_optional_libraries_are_the_extras() -> None:
    assert {"numpy", "sqlalchemy", "textual", "onnxruntime"} <= OPTIONAL
