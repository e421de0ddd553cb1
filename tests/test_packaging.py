"""Packaging: the wheel carries what users need (LICENSE, py.typed, the .proto sources,
the .pyi stubs), and the dependency floors really work: the generated code is imported
and used with exactly the lowest protobuf and grpcio that pyproject.toml admits, in a
throwaway venv."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import cirulla.v1

ROOT = Path(__file__).resolve().parent.parent
GENERATED = Path(cirulla.v1.__file__).parent
PIP_WHEEL = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
#: The runtimes whose floors the generated code decides.
PINNED = ("grpcio", "grpcio-health-checking", "grpcio-reflection", "protobuf")


def floors() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        found = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9.]+)", dep)
        assert found, f"dependency {dep!r} has no >= floor"
        out[found[1].lower()] = found[2]
    return out


def version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def test_floors_admit_no_runtime_older_than_the_generated_code() -> None:
    setup = {"__name__": "not_main", "__file__": str(ROOT / "setup.py")}
    source = (ROOT / "setup.py").read_text().split("\n# Generated before setuptools")[0]
    exec(compile(source, "setup.py", "exec"), setup)
    needed = setup["generated_versions"](GENERATED)
    assert set(needed) == {"protobuf", "grpcio"}
    declared = floors()
    for name, minimum in needed.items():
        assert version(declared[name]) >= minimum, (name, declared[name], minimum)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [*PIP_WHEEL, "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = out.glob("cirulla-*.whl")
    return built


def test_the_wheel_ships_license_types_and_protos(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith("/LICENSE") for n in names)
    assert "cirulla/py.typed" in names
    protos = {p.relative_to(ROOT / "proto").as_posix() for p in (ROOT / "proto").rglob("*.proto")}
    assert protos and {f"cirulla/v1/proto/{p}" for p in protos} <= names
    assert "cirulla/v1/match_service_pb2.pyi" in names
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License :: OSI Approved :: MIT License" in text and "Typing :: Typed" in text


@pytest.mark.slow
def test_the_lowest_allowed_protobuf_and_grpcio_work(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "floor-venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    declared = floors()
    pins = [f"{name}=={declared[name]}" for name in PINNED]
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *pins, str(wheel)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    installed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for pin in pins:
        assert pin in installed.splitlines(), f"{pin} not installed: {installed}"
    # Import every generated module and run a real server round trip at the floors.
    script = (
        "import importlib, pkgutil, cirulla.v1\n"
        "for m in pkgutil.iter_modules(cirulla.v1.__path__):\n"
        "    importlib.import_module('cirulla.v1.' + m.name)\n"
        "from cirulla.cli import main\n"
        "raise SystemExit(main(['bench', 'server', '--matches', '2']))\n"
    )
    run = subprocess.run(
        [str(python), "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    version_line = subprocess.run(
        [str(python), "-m", "cirulla", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert version_line.startswith("cirulla ")
