"""The package as a user meets it, from the outside: the sdist and the wheel are built the
way any installer builds them (PEP 517, isolated build environment, from this tree),
while a *newer* grpcio-tools than the pin is on offer; then each is installed into a clean
venv and used: the wheel with the ``tournament`` extra plays a 2-game tournament, the wheel
with the ``env`` extra runs a Gymnasium episode, and the sdist built with no working C
compiler installs the pure-Python core.

Why a fake newer grpcio-tools: on 2026-12-06 grpcio-tools 1.85.4 was published while
``[build-system] requires`` admitted ``>=1.85.1,<1.86``; every fresh install picked it and
failed. The build requirements are now exact pins (tests/test_packaging.py checks that);
this test shows that an isolated build ignores a newer release on offer, and the control
(``pip download`` of the unpinned name) shows the offer was really visible.

The installs take the lock's versions as constraints (requirements/all.txt, hashes
stripped): the test checks this project's packaging, and an upstream release that breaks
the ranges is what ``.ci/drift`` reports, not a reason for main to go red.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

#: One worker builds the dists once and runs every install (pytest -n with loadgroup).
pytestmark = pytest.mark.xdist_group("install-outside")

ROOT = Path(__file__).resolve().parent.parent
FAKE_VERSION = "1.99.0"


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


def with_find_links(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PIP_FIND_LINKS"] = " ".join(filter(None, [env.get("PIP_FIND_LINKS", ""), str(folder)]))
    return env


def lock_constraints(folder: Path) -> Path:
    """requirements/all.txt as a constraints file (pip takes no hashes there)."""
    lines = []
    for line in (ROOT / "requirements" / "all.txt").read_text().splitlines():
        if re.match(r"^[A-Za-z0-9]", line):
            lines.append(line.rstrip(" \\"))
    path = folder / "constraints.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built by PEP 517 with a newer grpcio-tools on offer."""
    work = tmp_path_factory.mktemp("dists")
    fake = fake_grpcio_tools(work / "offer")
    env = with_find_links(fake.parent)
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
    log = run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], env=env)
    assert f"grpcio-tools=={FAKE_VERSION}" not in log
    (sdist,) = out.glob("cirulla-*.tar.gz")
    (wheel,) = out.glob("cirulla-*.whl")
    return {"sdist": sdist, "wheel": wheel, "constraints": lock_constraints(work)}


def fresh_venv(where: Path) -> Path:
    venv.create(where, with_pip=True)
    return where / "bin"


def test_the_wheel_carries_code_generated_by_the_pinned_grpcio_tools(
    built: dict[str, Path],
) -> None:
    """The generated stubs name the generator's version: the pin's, not the offer's."""
    with zipfile.ZipFile(built["wheel"]) as archive:
        grpc_stub = archive.read("cirulla/v1/match_service_pb2_grpc.py").decode()
    pinned = re.search(r'"grpcio-tools==([0-9.]+)"', (ROOT / "pyproject.toml").read_text())
    assert pinned
    assert f"GRPC_GENERATED_VERSION = '{pinned[1]}'" in grpc_stub


def test_the_wheel_with_the_tournament_extra_plays_a_tournament(
    built: dict[str, Path], tmp_path: Path
) -> None:
    bin_dir = fresh_venv(tmp_path / "venv")
    run(
        [
            str(bin_dir / "pip"),
            "install",
            "-q",
            "-c",
            str(built["constraints"]),
            f"{built['wheel']}[tournament]",
        ]
    )
    version = run([str(bin_dir / "cirulla"), "--version"])
    assert version.startswith("cirulla ") and "core: native" in version, version
    out = tmp_path / "out"
    table = run(
        [
            str(bin_dir / "cirulla"),
            "tournament",
            "--bot",
            "r=random",
            "--bot",
            "g=greedy",
            "--games",
            "2",
            "--seed",
            "1",
            "--out",
            str(out),
        ],
        timeout=300,
    )
    results = json.loads((out / "results.json").read_text())
    assert results["finished_games"] == 2, results
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and all(g["seat_outcomes"] == ["ok", "ok"] for g in games)
    assert "Standings" in table


def test_the_wheel_with_the_env_extra_runs_an_episode(
    built: dict[str, Path], tmp_path: Path
) -> None:
    bin_dir = fresh_venv(tmp_path / "venv")
    run(
        [
            str(bin_dir / "pip"),
            "install",
            "-q",
            "-c",
            str(built["constraints"]),
            f"{built['wheel']}[env]",
        ]
    )
    script = (
        "import gymnasium, numpy\n"
        "import cirulla.env\n"
        "env = gymnasium.make('Cirulla-v0', players=2, target=11, opponents='random')\n"
        "obs, info = env.reset(seed=3)\n"
        "rng = numpy.random.default_rng(0)\n"
        "steps, done, reward = 0, False, 0.0\n"
        "while not done:\n"
        "    legal = numpy.flatnonzero(obs['action_mask'])\n"
        "    obs, reward, term, trunc, info = env.step(int(rng.choice(legal)))\n"
        "    steps, done = steps + 1, term or trunc\n"
        "print(steps, reward)\n"
    )
    steps, reward = run([str(bin_dir / "python"), "-c", script]).split()
    assert int(steps) > 10 and float(reward) in (-1.0, 1.0)


def test_the_sdist_without_a_c_compiler_installs_the_python_core(
    built: dict[str, Path], tmp_path: Path
) -> None:
    """No working compiler (CC is a program that always fails): the optional native
    cores are skipped, the install works and runs the pure-Python core."""
    bin_dir = fresh_venv(tmp_path / "venv")
    env = dict(os.environ, CC="/bin/false", CXX="/bin/false", LDSHARED="/bin/false")
    run(
        [
            str(bin_dir / "pip"),
            "install",
            "-q",
            "-c",
            str(built["constraints"]),
            str(built["sdist"]),
        ],
        env=env,
    )
    version = run([str(bin_dir / "cirulla"), "--version"])
    assert "core: python" in version, version
    checked = run([str(bin_dir / "cirulla"), "rules", "check"], timeout=300)
    assert checked.strip()
    site = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    assert not list(site.rglob("_native*.so")), "a native core was built without a compiler"
