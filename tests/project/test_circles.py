"""An import circle inside an area means two modules that cannot be read, tested or moved
one without the other: the order in which they load decides what works, and the circle
is usually held together by an import hidden inside a function. Issue 41 asks for none.
Every import counts here, at the top of a module or inside a function, except those
under ``if TYPE_CHECKING:`` (annotations only: they never run); a subcommand's
``Runs("module", "function")`` (src/cirulla/runs.py: the module imported when the command
runs) counts as an import of that module, so a command module and the code it dispatches
to stay one way too. The circles left are
listed below, a list that may only shrink: break one, then delete its line."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from tests.project.test_imports import project_modules, runs_targets

#: Circles (strongly connected groups of modules) still in the tree: none since issue 41
#: broke the last five; a list that may only shrink, should one ever be let in.
KNOWN: set[frozenset[str]] = set()


def _runs(node: ast.AST) -> Iterable[ast.AST]:
    """Every node below ``node`` except the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            yield from (n for branch in child.orelse for n in (branch, *_runs(branch)))
            continue
        yield child
        yield from _runs(child)


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    if path.suffix == ".pyi":
        return set()  # a compiled module (its stub's imports are annotations)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    named: set[str] = runs_targets(tree)
    for node in _runs(tree):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            named.add(base)
            named |= {f"{base}.{alias.name}" for alias in node.names}
    edges = set()
    for target in named:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def circles() -> set[frozenset[str]]:
    """Tarjan's strongly connected components of more than one module."""
    known = project_modules()  # a compiled module by its stub: a leaf
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                found.add(frozenset(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_no_new_import_circle() -> None:
    new = [
        " <-> ".join(sorted(group))
        for group in circles()
        if not any(group <= known for known in KNOWN)
    ]
    assert not new, "import circles (break them; the layering is docs/layout.md):\n" + "\n".join(
        new
    )


def test_the_known_circles_are_still_there() -> None:
    """A circle broken (or made smaller) is written down, so the list only ever shrinks."""
    changed = [" <-> ".join(sorted(group)) for group in KNOWN - circles()]
    assert not changed, (
        "circles broken or smaller: delete them from KNOWN or write what is left:\n"
        + "\n".join(changed)
    )
