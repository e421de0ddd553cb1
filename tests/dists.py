"""The sdist and the wheel as any installer builds them (PEP 517, isolated build
environment, from this tree) while a newer grpcio-tools than the pin is on offer: built once
per test session (per xdist worker; the modules that use it share one xdist group) for
tests/project/test_install_outside.py and tests/project/test_packaging.py.

The build requirements' wheels are downloaded from the index once, into the session's wheel
folder (``built_dists["wheels"]``): every isolated build (the sdist's, the wheel's, and the
sdist's install by pip) takes them from there with no index (``from_wheels``), instead of
looking grpcio and protobuf up again each time (pip spent about 3.5 CPU seconds a lookup).

What a test installs is this project's sdist or wheel, by pip (``pip_install_into``): pip
reads the distribution's metadata, resolves its requirements and extras, and installs it.
The third-party libraries those requirements name are put into the throwaway venv first, by
uv (``uv_install_into``; the lock's versions, or the floors under test): pip then finds each
requirement already satisfied by them, or fails (no index) if the metadata names a library
or a range they do not meet. What is checked is this project's packaging, not how pip
unpacks numpy: pip's download and install of the extras' libraries cost about 10 CPU
seconds a session; uv's, from its cache, well under one.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKE_VERSION = "1.99.0"
#: The xdist group of every test that uses the dists: one worker builds them once.
GROUP = pytest.mark.xdist_group("dists")


def run(args: list[str], env: dict[str, str] | None = None, timeout: int = 900) -> str:
    done = subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def fake_grpcio_tools(folder: Path) -> Path:
    """A grpcio-tools wheel newer than any release, whose protoc fails loudly if used."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"grpcio_tools-{FAKE_VERSION}"
    wheel = folder / f"{name}-py3-none-any.whl"
    info = f"{name}.dist-info"
    files = {
        "grpc_tools/__init__.py": "",
        "grpc_tools/protoc.py": (
            "def main(args):\n"
            f"    raise SystemExit('the fake grpcio-tools {FAKE_VERSION} was used')\n"
        ),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: grpcio-tools\nVersion: {FAKE_VERSION}\n"
        ),
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: cirulla-tests\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
    }
    record = "".join(f"{path},,\n" for path in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{info}/RECORD", record)
    return wheel


def clean_venv(where: Path) -> Path:
    """A venv with nothing installed, not even pip (the test's own pip installs into it
    with ``--python``: ensurepip cost about 4 CPU seconds a venv); its interpreter."""
    venv.create(where, with_pip=False)
    return where / "bin" / "python"


def pip_install_into(python: Path) -> list[str]:
    """The command that installs into ``python``'s venv: this pip, that interpreter, no
    byte-compiling (a third of an install's CPU; the tests import what they use once)."""
    return [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile"]


def uv_install_into(python: Path) -> list[str]:
    """The command that installs third-party libraries into ``python``'s venv: the uv of
    the test venv (requirements/uv.txt), no byte-compiling (uv's default)."""
    from uv import find_uv_bin

    return [find_uv_bin(), "pip", "install", "-q", "--python", str(python)]


def from_wheels(*folders: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) for a pip that installs from ``folders`` alone: no
    index (an isolated build environment's pip, a subprocess, follows the same variables)."""
    env = dict(os.environ if env is None else env)
    links = [env.get("PIP_FIND_LINKS", ""), *map(str, folders)]
    env["PIP_FIND_LINKS"] = " ".join(filter(None, links))
    env["PIP_NO_INDEX"] = "1"
    return env


def download_build_requirements(folder: Path) -> None:
    """The wheels of the build requirements and of what they need, at the versions an
    installer resolves them to for this interpreter (the newest their pins admit, not the
    lock's), into ``folder``: resolved by uv (``uv pip compile`` to a pylock.toml, which
    names every file of each version this interpreter can install), then each of those
    wheels downloaded by its address and checked against its hash. The isolated builds'
    pip picks among them as from the index. (``pip download`` did the same in 3.5 CPU
    seconds: it weighed each of the 27,000 files the index lists for grpcio, grpcio-tools
    and protobuf against this interpreter's tags; uv takes 0.3.)"""
    from uv import find_uv_bin

    folder.mkdir(parents=True)
    wanted = folder / "build-requirements.in"
    wanted.write_text("\n".join(build_requires()) + "\n")
    lock = folder / "pylock.toml"
    uv_compile = [find_uv_bin(), "pip", "compile", "-q", "--python", sys.executable]
    run([*uv_compile, str(wanted), "-o", str(lock)])
    for package in tomllib.loads(lock.read_text())["packages"]:
        assert package.get("wheels"), f"{package['name']}: no wheel for this interpreter"
        for wheel in package["wheels"]:
            with urllib.request.urlopen(wheel["url"], timeout=300) as response:
                data = response.read()
            assert hashlib.sha256(data).hexdigest() == wheel["hashes"]["sha256"], wheel["url"]
            (folder / wheel["url"].rsplit("/", 1)[1]).write_bytes(data)
    wanted.unlink()
    lock.unlink()


def build_requires() -> list[str]:
    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"])


def requirements_of(*extras: str) -> list[str]:
    """The base install's requirements and those of ``extras`` (and of the extras they
    name), as pyproject.toml gives them: what ``cirulla[EXTRAS]`` installs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted, todo, seen = list(project["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for dep in project["optional-dependencies"][extra]:
            nested = extras_of(dep)
            if nested:
                todo += sorted(nested - seen)
            else:
                wanted.append(dep)
    return wanted


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extras_of(dep: str) -> set[str]:
    """The extras a ``cirulla[...]`` requirement names (none for any other)."""
    found = re.match(r"cirulla\[([^\]]*)\]", dep)
    return {x.strip() for x in found[1].split(",")} if found else set()


def lock_constraints(folder: Path, without: tuple[str, ...] = ()) -> Path:
    """requirements/all.txt as a constraints file (pip takes no hashes there), less the
    distributions named in ``without`` (say, those a test pins at their floors)."""
    skip = {normalized(name) for name in without}
    lines = []
    for line in (ROOT / "requirements" / "all.txt").read_text().splitlines():
        found = re.match(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)", line)
        if found and normalized(found[1]) not in skip:
            lines.append(line.rstrip(" \\"))
    path = folder / ("constraints.txt" if not skip else "constraints-less-pinned.txt")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="session")
def built_dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built by PEP 517 with a newer grpcio-tools on offer; the
    folder of the build requirements' wheels (``wheels``), the lock as constraints."""
    work = tmp_path_factory.mktemp("dists")
    fake = fake_grpcio_tools(work / "offer")
    constraints = lock_constraints(work)
    # the build requirements as an installer resolves them (not the lock's versions)
    wheels = work / "wheels"
    download_build_requirements(wheels)
    env = from_wheels(fake.parent, wheels)
    # Control: the offer is visible; an unpinned request takes it.
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "-d",
            str(work / "dl"),
            "grpcio-tools",
        ],
        env=env,
    )
    assert [p.name for p in (work / "dl").iterdir()] == [fake.name]
    out = work / "dist"
    # Built from a copy of the tracked files: `setup.py sdist` stages its files inside the
    # source folder, where other tests' processes may be writing at the same time.
    source = work / "source"
    listed = run(["git", "-C", str(ROOT), "ls-files", "-z"]).split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    log = run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], env=env)
    assert f"grpcio-tools=={FAKE_VERSION}" not in log
    (sdist,) = out.glob("cirulla-*.tar.gz")
    (wheel,) = out.glob("cirulla-*.whl")
    return {"sdist": sdist, "wheel": wheel, "constraints": constraints, "wheels": wheels}
