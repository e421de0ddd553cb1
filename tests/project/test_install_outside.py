"""The package as a user meets it, from the outside: the sdist and the wheel are built the
way any installer builds them (PEP 517, isolated build environment, from this tree),
while a *newer* grpcio-tools than the pin is on offer; then each is installed into a clean
venv and used: the wheel with the ``tournament`` extra plays a 2-game tournament, the wheel
with the ``env`` extra runs a Gymnasium episode, and the sdist built with no working C
compiler installs the pure-Python core.

Why a fake newer grpcio-tools: on 2026-12-06 grpcio-tools 1.85.4 was published while
``[build-system] requires`` admitted ``>=1.85.1,<1.86``; every fresh install picked it and
failed. The build requirements are now exact pins (tests/project/test_packaging.py checks that);
this test shows that an isolated build ignores a newer release on offer, and the control
(``pip download`` of the unpinned name) shows the offer was really visible.

The installs take the lock's versions as constraints (requirements/all.txt, hashes
stripped): the test checks this project's packaging, and an upstream release that breaks
the ranges is what ``.ci/drift`` reports, not a reason for main to go red. The third-party
libraries (the base's and the extra's, as pyproject.toml names them) are put in the venv by
uv first; then pip installs the wheel or the sdist with no index: pip resolves its
metadata's requirements against them (tests/dists.py).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path

from tests.dists import (
    GROUP,
    ROOT,
    clean_venv,
    from_wheels,
    pip_install_into,
    requirements_of,
    run,
    uv_install_into,
)

pytestmark = GROUP


def installed_venv(
    where: Path, target: str, dists: dict[str, Path], *extras: str, **env: str
) -> Path:
    """A clean venv with ``target`` (whose ``extras`` are named) installed by pip at the
    lock's versions, its third-party libraries put there by uv first (tests/dists.py); pip
    has no index, only the build requirements' wheels (an sdist's isolated build); its bin
    folder."""
    python = clean_venv(where)
    lock = ["-c", str(dists["constraints"])]
    run([*uv_install_into(python), *lock, *requirements_of(*extras)], timeout=300)
    pip = [*pip_install_into(python), *lock, target]
    run(pip, env=from_wheels(dists["wheels"], env=dict(os.environ, **env)))
    return python.parent


def test_the_wheel_carries_code_generated_by_the_pinned_grpcio_tools(
    built_dists: dict[str, Path],
) -> None:
    """The generated stubs name the generator's version: the pin's, not the offer's."""
    with zipfile.ZipFile(built_dists["wheel"]) as archive:
        grpc_stub = archive.read("cirulla/v1/match_service_pb2_grpc.py").decode()
    pinned = re.search(r'"grpcio-tools==([0-9.]+)"', (ROOT / "pyproject.toml").read_text())
    assert pinned
    assert f"GRPC_GENERATED_VERSION = '{pinned[1]}'" in grpc_stub


def test_the_wheel_with_the_tournament_extra_plays_a_tournament(
    built_dists: dict[str, Path], tmp_path: Path
) -> None:
    bin_dir = installed_venv(
        tmp_path / "venv", f"{built_dists['wheel']}[tournament]", built_dists, "tournament"
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
    built_dists: dict[str, Path], tmp_path: Path
) -> None:
    bin_dir = installed_venv(tmp_path / "venv", f"{built_dists['wheel']}[env]", built_dists, "env")
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
    built_dists: dict[str, Path], tmp_path: Path
) -> None:
    """No working compiler (CC is a program that always fails): the optional native
    cores are skipped, the install works and runs the pure-Python core."""
    no_compiler = {"CC": "/bin/false", "CXX": "/bin/false", "LDSHARED": "/bin/false"}
    bin_dir = installed_venv(
        tmp_path / "venv", str(built_dists["sdist"]), built_dists, **no_compiler
    )
    version = run([str(bin_dir / "cirulla"), "--version"])
    assert "core: python" in version, version
    checked = run([str(bin_dir / "cirulla"), "rules", "check"], timeout=300)
    assert checked.strip()
    site = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    assert not list(site.rglob("_native*.so")), "a native core was built without a compiler"
