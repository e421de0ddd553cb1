"""Packaging: the wheel carries what users need (LICENSE, py.typed, the .proto sources,
the .pyi stubs); the dependency floors really work: the generated code is imported and
used with exactly the lowest protobuf and grpcio that pyproject.toml admits, in a
throwaway venv, where the wheel alone (the base install) brings no extra's library; and
the README's two commands install every extra."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import cirulla.v1

from .test_light_install import play_a_match

ROOT = Path(__file__).resolve().parent.parent
GENERATED = Path(cirulla.v1.__file__).parent
PIP_WHEEL = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
#: The runtimes whose floors the generated code decides.
PINNED = ("grpcio", "grpcio-health-checking", "grpcio-reflection", "protobuf")


#: Base-install runtimes, and those of the server extra (``bench server`` needs it).
BASE_PINNED = ("grpcio", "protobuf")
SERVER_PINNED = ("grpcio-health-checking", "grpcio-reflection")
#: Distributions no base install may bring (tests/test_light_install.py: the imports).
EXTRA_ONLY = (
    "sqlalchemy",
    "alembic",
    "psycopg",
    "psycopg-binary",
    "starlette",
    "uvicorn",
    "textual",
    "openskill",
    "numpy",
    "gymnasium",
    "pettingzoo",
    "open-spiel",
    "grpcio-health-checking",
    "grpcio-reflection",
)


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def floors() -> dict[str, str]:
    """``name -> floor`` of every requirement, base and extras (not cirulla[...] itself)."""
    deps = [*project()["dependencies"]]
    for extra in project()["optional-dependencies"].values():
        deps += [dep for dep in extra if not dep.startswith("cirulla[")]
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


def installed(python: Path) -> dict[str, str]:
    listing = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pairs = (line.split("==", 1) for line in listing.splitlines() if "==" in line)
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in pairs}


@pytest.mark.slow
def test_the_lowest_allowed_protobuf_and_grpcio_work(wheel: Path, tmp_path: Path) -> None:
    """The wheel alone (``pip install cirulla``) at the base floors: no extra's library
    comes with it, the generated code imports, the rule cases pass, and ``cirulla
    server`` names its extra; then the server extra at its floors runs real round trips."""
    env_dir = tmp_path / "floor-venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    declared = floors()
    pin = {name: f"{name}=={declared[name]}" for name in PINNED}

    def pip_install(*args: str) -> None:
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *args],
            check=True,
            capture_output=True,
            timeout=900,
        )

    def run(*code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), *code], capture_output=True, text=True, timeout=300, check=False
        )

    pip_install(*(pin[name] for name in BASE_PINNED), str(wheel))
    base = installed(python)
    for name in BASE_PINNED:
        assert base.get(name) == declared[name], (name, base)
    assert not set(base) & set(EXTRA_ONLY), sorted(set(base) & set(EXTRA_ONLY))
    script = (
        "import importlib, pkgutil, cirulla.v1\n"
        "for m in pkgutil.iter_modules(cirulla.v1.__path__):\n"
        "    importlib.import_module('cirulla.v1.' + m.name)\n"
        "from cirulla.cli import main\n"
        "raise SystemExit(main(['rules', 'check']))\n"
    )
    checked = run("-c", script)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    server = run("-m", "cirulla", "server", "--listen", "127.0.0.1:0", "--db", ":memory:")
    assert server.returncode == 2
    assert server.stderr == (
        "cirulla server: needs the server extra: pip install 'cirulla[server]'\n"
    )
    # the bot kit of that install plays a whole match on a normal server
    bot_env = {k: v for k, v in os.environ.items() if not k.startswith("CIRULLA_")}
    play_a_match(str(python), bot_env)

    pip_install(*pin.values(), f"{wheel}[server]")
    with_server = installed(python)
    for name in PINNED:
        assert with_server.get(name) == declared[name], (name, with_server)
    # Import every generated module and run a real server round trip at the floors.
    script = (
        "import importlib, pkgutil, cirulla.v1\n"
        "for m in pkgutil.iter_modules(cirulla.v1.__path__):\n"
        "    importlib.import_module('cirulla.v1.' + m.name)\n"
        "from cirulla.cli import main\n"
        "raise SystemExit(main(['bench', 'server', '--matches', '2']))\n"
    )
    bench = run("-c", script)
    assert bench.returncode == 0, bench.stdout + bench.stderr
    version_line = run("-m", "cirulla", "--version").stdout
    assert version_line.startswith("cirulla ")


def test_the_readme_commands_install_every_extra() -> None:
    """The README's main job installs ``.[all]`` (every extra) on one line, its test
    command ``.[dev]`` (which includes ``cirulla[all]``), and .ci/run runs exactly that."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    main_job = next(b for b in blocks if "cirulla tournament" in b and "venv" in b)
    assert main_job.strip() == (
        "python3 -m venv .venv && .venv/bin/pip install -e '.[all]' && .venv/bin/cirulla tournament"
    )
    tests = next(b for b in blocks if "pytest" in b and "venv" in b).strip()
    assert "\n" not in tests and ".venv/bin/pip install -q -e '.[dev]'" in tests
    assert (ROOT / ".ci" / "run").read_text().rstrip().splitlines()[-1] == tests
    extras = project()["optional-dependencies"]
    named = {x for dep in extras["all"] for x in _extras_of(dep)}
    assert named == set(extras) - {"all", "dev"}
    assert "all" in {x for dep in extras["dev"] for x in _extras_of(dep)}


def _extras_of(dep: str) -> set[str]:
    found = re.match(r"cirulla\[([^\]]*)\]", dep)
    return {x.strip() for x in found[1].split(",")} if found else set()
