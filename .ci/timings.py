"""A pytest plugin that writes each test's times, for finding where a run of the suite goes:

    PYTHONPATH=.ci CIRULLA_TEST_TIMES=/tmp/times.tsv \
        .venv/bin/pytest -p timings -n auto --dist loadgroup

One line a test (appended, from every xdist worker): the worker, its start and end (Unix
time), its wall seconds, its CPU seconds (the worker's own and that of the children it
reaped meanwhile: servers, ladders, bots, commands; not PostgreSQL's), and its node id,
tab-separated. docs/performance.md, "The test command's time", reads such a file."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Generator

import pytest


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    started, cpu = time.time(), _cpu()
    yield
    ended, used = time.time(), _cpu() - cpu
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    path = os.environ.get("CIRULLA_TEST_TIMES", "test-times.tsv")
    with open(path, "a", encoding="utf-8") as out:
        out.write(
            f"{worker}\t{started:.2f}\t{ended:.2f}\t{ended - started:.2f}\t{used:.2f}\t"
            f"{item.nodeid}\n"
        )
