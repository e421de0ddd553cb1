"""``cirulla bot check`` runs the engine under the limits it will have on a ladder or in a
tournament's sandbox (issue 37: a JVM or PyTorch engine failed there while the check
passed, and a limit's kill was reported as protocol violations): the ladder's defaults,
the same options as ``ladder add``, a control group where the host has one (this machine
and CI do), and a kill named as the runner and the ladder name it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cirulla.bots.cgroups import DEFAULT_LIMITS, BotLimits
from cirulla.clients.matches.sandbox import Confinement

HOSTILE = Path(__file__).parents[1] / "programs" / "hostile.py"
CHECK = [sys.executable, "-m", "cirulla", "bot", "check"]


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CHECK, *args], capture_output=True, text=True, timeout=300, check=False)


def test_a_ballooning_engine_is_reported_killed_at_its_memory_limit() -> None:
    done = check("--games=1", "--memory", "256M", f"text:{sys.executable} {HOSTILE} balloon")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    last = out.strip().splitlines()[-1]
    assert last.startswith("FAIL: ") and "killed: memory limit 256 MiB" in last, out
    assert "protocol violations" not in out and "violation 1" not in out, out
    assert "limits: memory 256 MiB, 256 processes, 1 core (control groups v" in out, out


def test_the_check_takes_the_ladders_defaults_and_options() -> None:
    """The same defaults as the sandbox's (``Confinement``), and a bad value is one line
    naming the option."""
    assert Confinement.limits == DEFAULT_LIMITS == BotLimits()
    from cirulla.bots.text.cli import check_limits_from_args

    class Args:
        limits = "tmp=1G,cpu=2"
        memory = "4G"
        processes = 64
        cpu = None

    got = check_limits_from_args(Args())  # type: ignore[arg-type]
    assert got.text(all_keys=True) == "memory=4G,processes=64,cpu=2,output=16M,tmp=1G"
    for bad, option in (("--memory=lots", "--memory"), ("--limits=speed=9", "--limits")):
        done = check(bad, "text:true")
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1 and option in done.stderr, done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "cirulla", "bot", "text", "--memory", "1G", "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "--memory is for `cirulla bot check`" in done.stderr
