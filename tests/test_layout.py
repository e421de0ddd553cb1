"""The path names the module (docs/layout.md): every source file's import name is read off
its path under a source root, the installed package maps each name onto that very file,
and the package list in pyproject.toml is the tree's."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SOURCE_ROOTS = ("src", "rules", "server", "bots", "clients", "env")


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
    assert PYPROJECT["tool"]["pyright"]["extraPaths"] == list(SOURCE_ROOTS)
    assert "typecheck" not in (ROOT / "setup.py").read_text()
