"""The base install (``pip install cirulla``: rules core, bot kit, protocol) needs no web,
TUI, database, rating or learning library, and a command whose extra is missing says so
in one line.

The commands run in subprocesses whose Python refuses to import every extra's libraries
(a meta-path finder installed by a ``sitecustomize`` on PYTHONPATH): what works there
works where those libraries are not installed. The match server the bots play on is
started normally, with everything installed.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from cirulla.cli import COMMAND_AREAS
from cirulla.v1 import match_service_pb2, match_settings_pb2, rules_pb2
from tests.server_harness import serving

ROOT = Path(__file__).resolve().parents[2]

#: The import names a base install must run without: every extra's libraries.
REFUSED = (
    "sqlalchemy",
    "alembic",
    "psycopg",
    "psycopg_binary",
    "starlette",
    "uvicorn",
    "textual",
    "openskill",
    "numpy",
    "gymnasium",
    "pettingzoo",
    "pyspiel",
    "open_spiel",
    "onnxruntime",
    "grpc_health",
    "grpc_reflection",
    "prometheus_client",
)
#: The same libraries as distributions: none may be a requirement outside an extra.
HEAVY_DISTRIBUTIONS = {
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
    "onnxruntime",
    "grpcio-health-checking",
    "grpcio-reflection",
    "prometheus-client",
}

SITECUSTOMIZE = f"""
import importlib.abc
import sys

REFUSED = frozenset({REFUSED!r})


class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in REFUSED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (refused)", name=name)
        return None


sys.meta_path.insert(0, Refuse())
"""


@pytest.fixture(scope="module")
def light_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a Python without any extra's libraries."""
    folder = tmp_path_factory.mktemp("light-site")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(folder), env.get("PYTHONPATH"))))
    for name in ("CIRULLA_SERVER", "CIRULLA_MATCH", "CIRULLA_TOKEN"):
        env.pop(name, None)
    return env


def cirulla(
    env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cirulla", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_light_python_refuses_every_extra_library(light_env: dict[str, str]) -> None:
    # the premise of every other test here: those imports fail, grpc does not
    probe = textwrap.dedent(
        f"""
        import importlib
        refused = []
        for name in {REFUSED!r}:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError:
                refused.append(name)
        import grpc, google.protobuf, rich
        print(",".join(refused))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], env=light_env, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip().split(",") == list(REFUSED)


def test_help_bot_help_and_the_rule_cases_run_on_the_base_install(
    light_env: dict[str, str],
) -> None:
    top = cirulla(light_env, "--help")
    assert top.returncode == 0, top.stderr
    assert top.stderr == ""
    for command in COMMAND_AREAS:
        assert re.search(rf"^\s+{command}\b", top.stdout, re.M), command
    for args in (("bot", "--help"), ("bot", "text", "--help"), ("engine", "random", "--help")):
        run = cirulla(light_env, *args)
        assert run.returncode == 0 and "usage: cirulla" in run.stdout, (args, run.stderr)
    rules = cirulla(light_env, "rules", "check")
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert re.search(r"\b\d+ passed, 0 failed\b", rules.stdout), rules.stdout


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (("server", "--listen", "127.0.0.1:0", "--db", "s.sqlite3"), "server"),
        (("tournament", "--games", "2"), "tournament"),
        (("ladder", "standings"), "ladder"),
        (("watch", "m-1"), "tui"),
        (("play", "--server", "127.0.0.1:1", "--match", "m-1", "--token", "t"), "tui"),
        (("bench", "env"), "env"),
        (("bench", "server"), "server"),
        (("bot", "policy", "--option", "model=m.npz", "--server", "127.0.0.1:1"), "env"),
        (("bot", "check", "text:./engine"), "server"),
        (("train", "--out", "w.npz"), "train"),
        (("bench", "learned"), "env"),
        (("bot", "learned", "--server", "127.0.0.1:1"), "env"),
    ],
    ids=[
        "server",
        "tournament",
        "ladder",
        "watch",
        "play-a-seat",
        "bench-env",
        "bench-server",
        "bot-policy",
        "bot-check",
        "train",
        "bench-learned",
        "bot-learned",
    ],
)
def test_a_command_whose_extra_is_missing_names_it_in_one_line(
    light_env: dict[str, str], tmp_path: Path, args: tuple[str, ...], extra: str
) -> None:
    run = cirulla(light_env, *args, cwd=tmp_path, timeout=30)
    name = " ".join(args[:2]) if args[0] == "bench" else args[0]
    assert run.returncode == 2, run.stdout + run.stderr
    hint = f"needs the {extra} extra: pip install -e '.[{extra}]' in the clone (docs/install.md)"
    assert run.stderr == f"cirulla {name}: {hint}\n"
    assert run.stdout == ""
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


def test_play_without_a_server_names_both_extras(light_env: dict[str, str]) -> None:
    run = cirulla(light_env, "play", "--vs", "random")
    assert run.returncode == 2
    expected = (
        "cirulla play: needs the tui and server extras: "
        "pip install -e '.[tui,server]' in the clone (docs/install.md)"
    )
    assert run.stderr == expected + "\n"


def play_a_match(python: str, env: dict[str, str]) -> None:
    """A whole 2-player match on a normal server (this process, everything installed):
    seat 0 ``cirulla bot random``, seat 1 ``cirulla bot greedy``, both run by ``python``
    with ``env``. Asserts both exit 0 having seen the match over, and a winner."""

    async def body() -> tuple[list[tuple[int, str]], Any]:
        async with serving() as (stub, srv, _):
            settings = match_settings_pb2.MatchSettings(
                rules=rules_pb2.Rules(
                    preset=rules_pb2.PRESET_STANDARD,
                    overrides=rules_pb2.RuleOptions(players=2, target=11),
                ),
                best_of=1,
                seed=23,
            )
            reply = await stub.CreateMatch(
                match_service_pb2.CreateMatchRequest(settings=settings), timeout=10
            )
            match_id = reply.match.match_id
            tokens = sorted(reply.seat_tokens, key=lambda t: t.seat)
            procs: list[asyncio.subprocess.Process] = []
            try:
                for seat, (kind, token) in enumerate(
                    zip(("random", "greedy"), tokens, strict=True)
                ):
                    seat_env = dict(env)
                    seat_env.update(
                        CIRULLA_SERVER=f"127.0.0.1:{srv.port}",
                        CIRULLA_MATCH=match_id,
                        CIRULLA_TOKEN=token.token,
                    )
                    procs.append(
                        await asyncio.create_subprocess_exec(
                            python,
                            "-m",
                            "cirulla",
                            "bot",
                            kind,
                            "--seed",
                            str(seat),
                            env=seat_env,
                            stdout=asyncio.subprocess.PIPE,
                            stderr=asyncio.subprocess.STDOUT,
                        )
                    )
                outputs = await asyncio.wait_for(
                    asyncio.gather(*(p.communicate() for p in procs)), timeout=180
                )
            finally:
                for proc in procs:
                    if proc.returncode is None:
                        proc.kill()
                        await proc.wait()
            results = [
                (p.returncode or 0, out.decode(errors="replace"))
                for p, (out, _) in zip(procs, outputs, strict=True)
            ]
            match = (
                await stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=match_id))
            ).match
            return results, match

    results, match = asyncio.run(body())
    for seat, (code, log) in enumerate(results):
        assert code == 0, f"seat {seat} exited {code}:\n{log}"
        assert "match over" in log, log
    assert match.HasField("result") and match.result.HasField("winner_side")


def test_a_bot_plays_a_whole_match_on_the_base_install(light_env: dict[str, str]) -> None:
    """Both seats are ``cirulla bot`` processes of the light Python; the server is a
    normal one."""
    play_a_match(sys.executable, light_env)


def test_the_distribution_requires_no_extra_library_outside_an_extra() -> None:
    base = set()
    for line in importlib.metadata.requires("cirulla") or []:
        requirement = Requirement(line)
        if requirement.marker is None or "extra" not in str(requirement.marker):
            base.add(_normal(requirement.name))
    assert base, "no base requirement at all"
    assert not base & HEAVY_DISTRIBUTIONS, sorted(base & HEAVY_DISTRIBUTIONS)


def test_the_extras_table_is_pyprojects() -> None:
    """cirulla.extras names, per extra, the import names of exactly the distributions
    pyproject.toml lists there, and the extras that include others say so."""
    from cirulla import extras

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    providers = importlib.metadata.packages_distributions()
    for extra, modules in extras.MODULES.items():
        requirements = [Requirement(r) for r in declared[extra]]
        own = {_normal(r.name) for r in requirements if r.name != "cirulla"}
        included = {x for r in requirements if r.name == "cirulla" for x in r.extras}
        provided = {m: {_normal(d) for d in providers.get(m, [])} for m in modules}
        assert own <= set().union(*provided.values()), (extra, own, provided)
        assert all(dists & own for dists in provided.values()), (extra, own, provided)
        assert included == set(extras.INCLUDES.get(extra, ())), extra
    everything = {x for r in declared["all"] for x in Requirement(r).extras}
    assert everything == set(extras.MODULES)
    assert any(Requirement(r).extras == {"all"} for r in declared["dev"])


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
