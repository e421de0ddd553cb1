"""Shared fixtures. Tests use the real parts: real rules core, real servers, real processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from cirulla.logs import quiet_grpc

# Bytecode caches are written, as Python does by default, even where the environment says
# PYTHONDONTWRITEBYTECODE (this project's machines set it): the suite starts some hundreds
# of Python processes (servers, ladders, bots, commands), and without the caches each one
# compiled every module it imports again, the project's and its libraries' (uv installs
# none): a match server's imports took 1.4 s of CPU instead of 0.5, and
# tests/ladder/test_end_reasons.py 23 CPU-s instead of 13.5, the caches' writing included.
# Every process the tests start inherits this; each module is compiled once, by the first
# process that imports it (the writes are atomic).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# The tests run runners in this process too: the same gRPC settings as the cirulla
# command's (before any test module imports grpc).
quiet_grpc()


DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers a processor. Most tests wait on the processes they start
    (servers, ladders, bots, browsers): one pytest process alone kept 0.64 to 0.74 of a
    processor busy, and even four workers on two processors kept them 80% busy (1.59
    processors over the run). Measured on fresh clones of the 2-core machine, idle: on
    479ddcd (1,121 tests, the same clone) 3 workers 528 s, 4 workers 482 s, 5 workers
    521 s; on 76b3f76 (1,133 tests, after the tests' waiting was cut) 3 workers 534 s,
    4 workers 502 s; on f024bca 4 workers 520 s, 5 workers 524 s (the processors 153%
    busy in both: a fifth worker only queues); all passing. Two workers a processor were
    first tried on an older suite (2026-12-06), which then had tests that timed a seat's
    1 s reconnection or a ladder's rated games against the wall clock on a loaded
    machine: four failed; those tests have waited on conditions since.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when it is set."""
    wanted = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if wanted.isdigit():
        return int(wanted)
    return 2 * len(os.sched_getaffinity(0))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long tests first (marked ``slow``; the order is otherwise kept), so that under
    pytest-xdist no worker starts a long test when the others are nearly done; and the
    ``xdist_group`` marks kept on an xdist worker under ``--dist loadgroup``."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if getattr(config.option, "loadgroup", False):
        for item in items:
            _name_its_group(item)


def _name_its_group(item: pytest.Item) -> None:
    """Suffix ``@GROUP`` to the node id of a test marked ``xdist_group(GROUP)``.

    That suffix is how pytest-xdist's loadgroup scheduler sees a group, and pytest-xdist
    3.8 writes it to ``item._nodeid``, which pytest 9.2 no longer reads (the id is the
    structured ``item._id``): every group was split across the workers, and the sdist and
    the wheel of tests/dists.py were built once per worker. Nothing to do where the
    suffix is already there (an xdist that writes it where pytest reads it).
    """
    names = sorted(
        {
            str(m.args[0] if m.args else m.kwargs.get("name", "default"))
            for m in item.iter_markers("xdist_group")
        }
    )
    if not names:
        return
    suffix = "@" + "_".join(names)
    if item.nodeid.endswith(suffix):
        return
    current = getattr(item, "_id", None)
    if current is None or isinstance(current, str):
        return  # an older pytest: xdist's own rename works there
    item._id = type(current).parse(item.nodeid + suffix)


# PostgreSQL fixtures (a real server; one fresh database per test): see tests/postgres.py.
# The sdist and the wheel, built once per session: see tests/dists.py.
from .dists import built_dists  # noqa: E402, F401
from .postgres import db_url, postgres_server, postgres_url  # noqa: E402, F401
