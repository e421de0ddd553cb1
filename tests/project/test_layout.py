"""The path names the module (docs/layout.md): every source file's import name is read off
its path under a source root, the installed package maps each name onto that very file,
and the package list in pyproject.toml is the tree's."""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

from tests.project.test_imports import runs_targets

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SOURCE_ROOTS = ("src", "rules", "server", "bots", "clients", "ladder", "env")


def source_modules() -> dict[str, Path]:
    """Import name -> file, from the paths alone."""
    modules = {}
    for root in SOURCE_ROOTS:
        for path in sorted((ROOT / root / "cirulla").rglob("*.py")):
            parts = path.relative_to(ROOT / root).with_suffix("").parts
            if "v1" in parts[1:2] or "__pycache__" in parts:
                continue  # generated at install
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def test_the_namespace_has_no_root_package_and_every_area_is_a_source_root() -> None:
    for root in SOURCE_ROOTS:
        assert (ROOT / root / "cirulla").is_dir(), root
        assert not (ROOT / root / "cirulla" / "__init__.py").exists(), root
        entries = {p.name for p in (ROOT / root).iterdir() if p.name != "__pycache__"}
        assert entries == {"cirulla"}, f"{root}/ holds more than its namespace portion"
    for area in SOURCE_ROOTS[1:]:
        package = ROOT / area / "cirulla" / area
        assert (package / "__init__.py").is_file() and (package / "py.typed").is_file()


def test_every_module_is_the_file_its_name_says() -> None:
    modules = source_modules()
    assert len(modules) > 100
    for name, path in modules.items():
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        assert Path(spec.origin).resolve() == path.resolve(), (name, spec.origin)


def test_pyproject_packages_are_the_trees_packages() -> None:
    setuptools = PYPROJECT["tool"]["setuptools"]
    tree = {
        name
        for name, path in source_modules().items()
        if path.name == "__init__.py" or name == "cirulla"
    }
    tree |= {"cirulla", "cirulla.v1"}
    assert set(setuptools["packages"]) == tree
    for name, folder in setuptools["package-dir"].items():
        root = "src" if name == "cirulla" else name.split(".")[1]
        assert Path(folder) == Path(root, *name.split(".")), (name, folder)


def test_the_type_checkers_read_the_tree_itself() -> None:
    mypy = PYPROJECT["tool"]["mypy"]
    assert mypy["mypy_path"].split(":") == list(SOURCE_ROOTS)
    assert ".cache" not in str(mypy)
    assert mypy["strict"] is True  # the test command runs mypy --strict on the project
    assert PYPROJECT["tool"]["pyright"]["extraPaths"] == list(SOURCE_ROOTS)
    assert "typecheck" not in (ROOT / "setup.py").read_text()


#: Which areas each area may import (docs/layout.md): anything else is an edge against
#: the layering. ``cirulla`` is src/ (the command, wire, version, logs, console, extras).
ALLOWED = {
    "rules": set(),
    "cirulla": {"rules", "v1"},
    "server": {"rules", "v1", "cirulla"},
    "bots": {"rules", "v1", "cirulla"},
    "env": {"rules", "bots", "cirulla"},
    "clients.matches": {"rules", "bots", "server", "v1", "cirulla"},
    "clients.tournament": {
        "clients.matches",
        "ladder",
        "rules",
        "bots",
        "server",
        "env",
        "v1",
        "cirulla",
    },
    "ladder": {"clients.matches", "rules", "bots", "server", "v1", "cirulla"},
    "clients.play": {"clients.matches", "rules", "bots", "server", "v1", "cirulla"},
}
#: Modules whose job is to reach every area: the ``cirulla`` command's lazy dispatch, and
#: the rules core's own command, which prints through the commands' one console.
EXEMPT = {
    "cirulla.cli": None,
    "cirulla.__main__": None,
    "cirulla.rules.cli": {"cirulla"},
    # ``cirulla bench env``'s parser, outside the env package (whose import imports Gymnasium)
    "cirulla.cli_env": {"env"},
}


def area_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in (
        "rules",
        "server",
        "bots",
        "env",
        "clients",
        "ladder",
        "v1",
    ):
        return "cirulla"
    if parts[1] == "clients":
        return f"clients.{parts[2]}" if len(parts) > 2 else "clients"
    return parts[1]


def imported_modules(path: Path) -> set[str]:
    """The project's modules ``path`` imports, and those its subcommands' ``Runs`` name
    (src/cirulla/runs.py: imported when the command runs, an edge all the same)."""
    tree = ast.parse(path.read_text())
    found = runs_targets(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "cirulla":
                found |= {f"cirulla.{a.name}" for a in node.names}
            elif node.module.startswith("cirulla."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("cirulla.")}
    return found


def test_areas_import_one_way() -> None:
    edges = []
    for name, path in source_modules().items():
        if name in EXEMPT and EXEMPT[name] is None:
            continue
        area = area_of(name)
        allowed = ALLOWED.get(area, set()) | {area} | (EXEMPT.get(name) or set())
        for target in sorted(imported_modules(path)):
            if area_of(target) not in allowed:
                edges.append(f"{name} -> {target}")
    assert edges == [], "imports against the layering (docs/layout.md):\n" + "\n".join(edges)
