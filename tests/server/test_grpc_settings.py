"""gRPC's core settings every cirulla process runs with (cirulla.logs.quiet_grpc): its
errors only, and no fork handlers, which abort a forked child before it can exec when
gRPC threads run in the parent. They reach every process a runner starts."""

from __future__ import annotations

import subprocess
import sys

from cirulla.clients.matches.seat_argv import program_env
from cirulla.logs import GRPC_SETTINGS


def test_the_cirulla_command_sets_them_before_grpc_loads() -> None:
    code = (
        "import os; import cirulla.cli; import grpc; "
        "print(os.environ['GRPC_ENABLE_FORK_SUPPORT'], os.environ['GRPC_VERBOSITY'])"
    )
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["false", "ERROR"]


def test_a_runner_passes_them_to_the_processes_it_starts() -> None:
    env = program_env()
    for name, value in GRPC_SETTINGS:
        assert env[name] == value  # set by the test session like by the cirulla command
