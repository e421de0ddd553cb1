"""setup.py's build hook, with real setuptools and the real C compiler: an optional
extension that fails to compile in an editable install leaves no stale module behind
(the module of the previous sources would otherwise run, silently)."""

from __future__ import annotations

import ast
import os
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from setuptools import Distribution, Extension
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parents[2]


def _build_ext_class() -> type[build_ext]:
    """setup.py's ``BuildExt``, compiled from its source (importing setup.py would run the
    whole build)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "BuildExt"]
    namespace: dict[str, Any] = {
        "build_ext": build_ext,
        "Extension": Extension,
        "Path": Path,
        "os": os,
    }
    exec(compile(ast.Module(body=[node], type_ignores=[]), "setup.py", "exec"), namespace)
    cls: type[build_ext] = namespace["BuildExt"]
    return cls


def test_a_failed_optional_extension_removes_its_stale_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_fast.c").write_text("this is not C;\n")
    stale = package / ("_fast" + sysconfig.get_config_var("EXT_SUFFIX"))
    stale.write_bytes(b"built from the previous sources")
    monkeypatch.chdir(tmp_path)
    dist = Distribution(
        {
            "name": "pkg",
            "packages": ["pkg"],
            "ext_modules": [Extension("pkg._fast", ["pkg/_fast.c"], optional=True)],
            "cmdclass": {"build_ext": _build_ext_class()},
        }
    )
    command = dist.get_command_obj("build_ext")
    command.editable_mode = True  # type: ignore[attr-defined]
    command.build_lib = str(tmp_path / "build-lib")  # type: ignore[attr-defined]
    command.build_temp = str(tmp_path / "build-temp")  # type: ignore[attr-defined]
    dist.run_command("build_ext")  # an optional extension's failure is a warning
    assert not stale.exists()
    assert f"removed the stale {Path('pkg') / stale.name}" in capsys.readouterr().out


def test_the_extensions_compile_one_per_processor_unless_told() -> None:
    """An install compiles the extensions side by side (setup.py's ``BuildExt``), and
    ``--parallel`` still decides when given."""
    cls = _build_ext_class()
    default = cls(Distribution({"ext_modules": []}))
    default.finalize_options()
    assert default.parallel == (os.cpu_count() or 1)
    told = cls(Distribution({"ext_modules": []}))
    told.parallel = 1
    told.finalize_options()
    assert told.parallel == 1
