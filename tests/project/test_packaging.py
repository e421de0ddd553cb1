"""Packaging: the wheel carries what users need (LICENSE, py.typed, the .proto sources,
the .pyi stubs); the dependency floors really work: the generated code is imported and
used with exactly the lowest protobuf and grpcio that pyproject.toml admits, in a
throwaway venv, where the wheel alone (the base install) brings no extra's library; and
the README's two commands install every extra."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import cirulla.v1
from tests.dists import (
    GROUP,
    build_requires,
    clean_venv,
    extras_of,
    from_wheels,
    lock_constraints,
    normalized,
    pip_install_into,
    requirements_of,
    uv_install_into,
)
from tests.project.test_light_install import play_a_match

#: The wheel is tests/dists.py's, built once for this module and test_install_outside.py.
pytestmark = GROUP

ROOT = Path(__file__).resolve().parents[2]
GENERATED = Path(cirulla.v1.__file__).parent
#: The runtimes whose floors the generated code decides.
PINNED = ("grpcio", "grpcio-health-checking", "grpcio-reflection", "protobuf")


#: Base-install runtimes, and those of the server extra (``bench server`` needs it).
BASE_PINNED = ("grpcio", "protobuf")
SERVER_PINNED = ("grpcio-health-checking", "grpcio-reflection")
#: Distributions no base install may bring (tests/project/test_light_install.py: the imports).
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
        # a range's floor, or a build tool's exact pin (the dev extra's)
        found = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(?:>=|==)\s*([0-9.]+)", dep)
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


@pytest.fixture
def wheel(built_dists: dict[str, Path]) -> Path:
    """The wheel tests/dists.py builds (PEP 517, the pinned build tools)."""
    return built_dists["wheel"]


def test_the_wheel_ships_license_types_and_protos(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith("/LICENSE") for n in names)
    assert "cirulla/py.typed" in names
    protos = {p.relative_to(ROOT / "proto").as_posix() for p in (ROOT / "proto").rglob("*.proto")}
    assert protos and {f"cirulla/v1/proto/{p}" for p in protos} <= names
    assert "cirulla/v1/match_service_pb2.pyi" in names
    stubs = {"cirulla/rules/_native.pyi", "cirulla/bots/_search.pyi", "cirulla/env/_native.pyi"}
    assert stubs <= names  # the native modules' types, for the users' type checkers
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text and "Typing :: Typed" in text


def test_the_wheel_and_the_sdist_ship_the_web_templates(built_dists: dict[str, Path]) -> None:
    """The web view reads its pages' templates from its package's folder at run time:
    package data in the wheel, and in the sdist the wheel is built from."""
    folder = ROOT / "server/cirulla/server/web/templates"
    templates = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert {"base.html", "ladder/standings.html", "live.js"} <= templates
    names = set(zipfile.ZipFile(built_dists["wheel"]).namelist())
    assert {f"cirulla/server/web/templates/{t}" for t in templates} <= names
    with tarfile.open(built_dists["sdist"]) as sdist:
        inside = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {f"server/cirulla/server/web/templates/{t}" for t in templates} <= inside


def installed(python: Path) -> dict[str, str]:
    """``name -> version`` of every distribution in ``python``'s venv, read by that
    interpreter from the installed metadata (what ``pip list`` reads, in a tenth of the
    time)."""
    script = (
        "import importlib.metadata as m\n"
        "for d in m.distributions(): print(d.metadata['Name'] + '==' + d.version)\n"
    )
    listing = subprocess.run(
        [str(python), "-c", script], check=True, capture_output=True, text=True
    ).stdout
    pairs = (line.split("==", 1) for line in listing.splitlines() if "==" in line)
    return {normalized(name): version for name, version in pairs}


@pytest.mark.slow
def test_the_lowest_allowed_protobuf_and_grpcio_work(
    wheel: Path, built_dists: dict[str, Path], tmp_path: Path
) -> None:
    """The wheel alone (``pip install cirulla``) at the base floors: no extra's library
    comes with it, the generated code imports, the rule cases pass, and ``cirulla
    server`` names its extra; then the server extra at its floors runs real round trips."""
    env_dir = tmp_path / "floor-venv"
    python = clean_venv(env_dir)
    declared = floors()
    pin = {name: f"{name}=={declared[name]}" for name in PINNED}
    # The third-party libraries by uv (tests/dists.py): the pinned ones at their floors,
    # the others at the lock's versions; then pip installs the wheel with no index, its
    # requirements met by those or not at all.
    others = ["-c", str(lock_constraints(tmp_path, without=PINNED))]
    env = from_wheels(built_dists["wheels"])

    def uv_install(*args: str) -> None:
        subprocess.run(
            [*uv_install_into(python), *others, *args], check=True, capture_output=True, timeout=300
        )

    def pip_install(*args: str) -> None:
        subprocess.run(
            [*pip_install_into(python), *args],
            check=True,
            capture_output=True,
            timeout=900,
            env=env,
        )

    def run(*code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), *code], capture_output=True, text=True, timeout=300, check=False
        )

    base_pins = [pin[name] for name in BASE_PINNED]
    uv_install(*base_pins, *requirements_of())
    pip_install(*base_pins, str(wheel))
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
        "cirulla server: needs the server extra: "
        "pip install -e '.[server]' in the clone (docs/install.md)\n"
    )
    # the bot kit of that install plays a whole match on a normal server
    bot_env = {k: v for k, v in os.environ.items() if not k.startswith("CIRULLA_")}
    play_a_match(str(python), bot_env)

    uv_install(*pin.values(), *requirements_of("server"))
    pip_install(*pin.values(), f"{wheel}[server]")
    with_server = installed(python)
    for name in PINNED:
        assert with_server.get(name) == declared[name], (name, with_server)
    # Import every generated module and run a real server round trip at the floors: every
    # part of the benchmark (its server processes and client processes, the loads, the
    # echo, the round trips, a game in process) at its smallest; what is measured here is
    # that they run, not how fast (2000 decisions and games to 51 took half the test).
    bench_args = ["--matches", "2", "--decisions", "100", "--target", "11"]
    bench_args += ["--think-ms", "1", "--processes", "1"]
    script = (
        "import importlib, pkgutil, cirulla.v1\n"
        "for m in pkgutil.iter_modules(cirulla.v1.__path__):\n"
        "    importlib.import_module('cirulla.v1.' + m.name)\n"
        "from cirulla.cli import main\n"
        f"raise SystemExit(main(['bench', 'server', *{bench_args!r}]))\n"
    )
    bench = run("-c", script)
    assert bench.returncode == 0, bench.stdout + bench.stderr
    version_line = run("-m", "cirulla", "--version").stdout
    assert version_line.startswith("cirulla ")


MAIN_JOB = (
    "python3 -m venv .venv && .venv/bin/pip install -r requirements/all.txt"
    " && .venv/bin/pip install --no-deps --no-build-isolation -e ."
    " && .venv/bin/cirulla tournament"
)
TEST_INSTALL = (
    "python3 -m venv .venv && .venv/bin/pip install -q -r requirements/uv.txt"
    " && .venv/bin/uv pip install -q --python .venv/bin/python --require-hashes"
    " -r requirements/dev.txt"
    " && .venv/bin/uv pip install -q --python .venv/bin/python --no-deps"
    " --no-build-isolation -e ."
)


def test_the_readme_commands_install_every_extra_from_the_lock() -> None:
    """The README's main job installs the lock of ``.[all]`` (every extra), its test
    command the lock of ``.[dev]`` (which includes ``cirulla[all]``), each then the project
    itself with no dependency resolution and no build isolation (the build tools come from
    the lock too), and .ci/run runs exactly that test command."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    main_job = next(b for b in blocks if "cirulla tournament" in b and "venv" in b)
    assert main_job.strip() == MAIN_JOB
    tests = next(b for b in blocks if "pytest" in b and "venv" in b).strip()
    assert "\n" not in tests and tests.startswith(TEST_INSTALL + " && "), tests
    assert (ROOT / ".ci" / "run").read_text().rstrip().splitlines()[-1] == tests
    extras = project()["optional-dependencies"]
    named = {x for dep in extras["all"] for x in extras_of(dep)}
    assert named == set(extras) - {"all", "dev"}
    assert "all" in {x for dep in extras["dev"] for x in extras_of(dep)}


def test_build_requirements_are_exact_pins() -> None:
    """A build requirement that generates code (grpcio-tools) or builds the package
    (setuptools) is ``name==X.Y.Z``: a range lets an upstream release change what every
    fresh install generates (grpcio-tools 1.85.4 did, on 2026-12-06). The dev extra's
    grpcio-tools (for tools that compile protos) is the same pin."""
    pins = {}
    for requirement in build_requires():
        found = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9]+(?:\.[0-9]+)+)", requirement.strip())
        assert found, f"[build-system] requires {requirement!r} is not an exact pin"
        pins[found[1].lower()] = found[2]
    assert "grpcio-tools" in pins
    dev = project()["optional-dependencies"]["dev"]
    dev_tools = [d for d in dev if d.startswith("grpcio-tools")]
    assert dev_tools == [f"grpcio-tools=={pins['grpcio-tools']}"]


def locked(name: str) -> dict[str, list[tuple[str, str]]]:
    """``requirements/NAME.txt``: package -> [(version, marker)], every entry hashed."""
    text = (ROOT / "requirements" / f"{name}.txt").read_text()
    entries: dict[str, list[tuple[str, str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        head = block.splitlines()[0]
        found = re.match(r"([A-Za-z0-9_.-]+)==([^ ;\\]+)\s*(?:;\s*([^\\]+))?", head)
        if not found:
            continue
        assert "--hash=sha256:" in block, f"requirements/{name}.txt: {head} has no hash"
        key = re.sub(r"[-_.]+", "-", found[1]).lower()
        entries.setdefault(key, []).append((found[2], (found[3] or "").strip()))
    return entries


def test_the_test_commands_installer_is_the_uv_the_lock_is_made_with() -> None:
    """The README's test command installs the lock with uv from requirements/uv.txt: one
    exact, hashed version, the one .ci/uv pins to make the lock (a second uv, pinned
    elsewhere, would drift from it unseen)."""
    pinned = re.search(r"^UV_VERSION=(\S+)$", (ROOT / ".ci" / "uv").read_text(), re.M)
    assert pinned, ".ci/uv names no UV_VERSION"
    assert locked("uv") == {"uv": [(pinned[1], "")]}, "run .ci/lock"


@pytest.mark.parametrize("extra", ["all", "dev"])
def test_the_lock_holds_the_build_tools_and_satisfies_every_range(extra: str) -> None:
    """Each lock file pins the build tools at their exact pins and, for this machine's
    Python, a version of every dependency the extra names that its range admits: a lock
    left behind by an edit of pyproject.toml fails here (refresh it with .ci/lock)."""
    from packaging.markers import Marker
    from packaging.requirements import Requirement

    entries = locked(extra)

    def version_here(name: str) -> str:
        key = re.sub(r"[-_.]+", "-", name).lower()
        assert key in entries, f"requirements/{extra}.txt lacks {name}: run .ci/lock"
        here = [v for v, marker in entries[key] if not marker or Marker(marker).evaluate()]
        assert len(here) == 1, (name, entries[key])
        return here[0]

    for requirement in build_requires():
        name, pinned = requirement.split("==")
        assert version_here(name) == pinned, requirement
    for dep in requirements_of(extra):
        requirement = Requirement(dep)
        if requirement.marker and not requirement.marker.evaluate():
            continue
        assert requirement.specifier.contains(version_here(requirement.name), prereleases=True), (
            f"requirements/{extra}.txt pins {requirement.name} outside {dep!r}: run .ci/lock"
        )
