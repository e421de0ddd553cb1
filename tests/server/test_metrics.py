"""Prometheus metrics: scraped over HTTP from a real match server after real matches, from
``cirulla server --metrics`` and from a real ``cirulla ladder serve --metrics`` after
ladder matches, parsed with prometheus_client's own parser."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cirulla.server.client import Outbox, hello, submit_index
from cirulla.server.metrics import start_metrics
from cirulla.v1 import match_service_pb2 as ms
from tests.ladder_harness import LadderProcess, open_store, wait_for
from tests.server.test_play import play_match, settings
from tests.server_harness import serving, tied_to_this_process


def scrape(address: str) -> dict[str, float]:
    """Every sample of ``http://address/metrics``: name{labels} -> value."""
    text = urllib.request.urlopen(f"http://{address}/metrics", timeout=10).read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            out[sample.name + (f"{{{labels}}}" if labels else "")] = sample.value
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def one_illegal_then_play(stub: ms.MatchServiceStub) -> None:
    """A match whose seat 0 first answers with an index outside the list (rejected as
    INDEX_OUT_OF_RANGE, which counts as an illegal action). Seeded: an unseeded deal can
    end the game otherwise than at the target (a cappotto), which the test counts."""
    created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings(2, target=11, seed=5)))
    match_id = created.match.match_id
    rejected = asyncio.Event()

    async def seat(token: str, n: int) -> None:
        out = Outbox()
        out.send(hello(match_id, token, f"s{n}"))
        tried = False
        async for msg in stub.Play(out):
            kind = msg.WhichOneof("body")
            if kind == "decision_request":
                req = msg.decision_request
                if n == 0 and not tried:
                    tried = True
                    out.send(submit_index(req.decision_id, len(req.legal_actions) + 5))
                    continue
                out.send(submit_index(req.decision_id, 0))
            elif kind == "action_rejected":
                rejected.set()
                out.send(submit_index(msg.action_rejected.open_decision_id, 0))
            elif kind in ("match_result", "goodbye"):
                out.send(None)
                return

    await asyncio.gather(*(seat(t.token, t.seat) for t in created.seat_tokens))
    assert rejected.is_set()


def test_match_server_metrics_after_real_matches() -> None:
    async def main() -> None:
        exporter = start_metrics("127.0.0.1:0")
        try:
            address = f"127.0.0.1:{exporter.port}"
            before = await asyncio.to_thread(scrape, address)
            async with serving(":memory:") as (stub, srv, _ch):
                await play_match(stub, settings(2, target=11, seed=3))
                await play_match(stub, settings(2, target=11, seed=4))
                await one_illegal_then_play(stub)
                await srv.hub.records_written()
                after = await asyncio.to_thread(scrape, address)

            def moved(name: str) -> float:
                return after.get(name, 0.0) - before.get(name, 0.0)

            assert moved("cirulla_matches_finished_total") >= 3
            assert moved("cirulla_decisions_total") > 0
            assert moved("cirulla_decision_seconds_count") > 0
            # every answered decision is in the histogram, and none took over a minute
            assert moved("cirulla_decision_seconds_bucket{le=60.0}") == moved(
                "cirulla_decision_seconds_count"
            )
            assert moved("cirulla_illegal_actions_total") >= 1
            assert moved("cirulla_records_written_total") >= 3
            assert moved("cirulla_games_finished_total{reason=target}") >= 3
            assert after["cirulla_matches_running"] == before.get("cirulla_matches_running", 0)
            assert "process_cpu_seconds_total" in after  # the process collector is there
        finally:
            exporter.stop()

    asyncio.run(main())


def test_cirulla_server_metrics_flag(tmp_path: Path) -> None:
    port = free_port()
    port_file = tmp_path / "port"
    argv = [sys.executable, "-m", "cirulla", "server", "--listen", "127.0.0.1:0"]
    argv += ["--db", str(tmp_path / "s.sqlite3"), "--port-file", str(port_file)]
    argv += ["--metrics", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(tied_to_this_process(argv), stderr=subprocess.PIPE, text=True)
    try:
        wait_for(port_file.exists, 30, "the server to listen", every=0.1)
        samples = scrape(f"127.0.0.1:{port}")
        assert samples["cirulla_matches_running"] == 0
        assert samples["cirulla_decisions_total"] == 0
    finally:
        proc.terminate()
        proc.wait(30)
    bad = subprocess.run(
        [sys.executable, "-m", "cirulla", "server", "--metrics", "nowhere"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "cirulla server: --metrics 'nowhere': expected HOST:PORT with a port of 0 to 65535"
    ]
    for flag in ("--metrics", "--http"):
        bad = subprocess.run(
            [sys.executable, "-m", "cirulla", "ladder", "serve", flag, "127.0.0.1:99999"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert bad.returncode == 2
        assert bad.stderr.strip().splitlines() == [
            f"cirulla ladder serve: {flag} '127.0.0.1:99999': expected HOST:PORT with a port "
            "of 0 to 65535"
        ]
        assert not (tmp_path / "cirulla-ladder-data").exists()  # nothing was started


@pytest.mark.slow
def test_ladder_metrics_after_ladder_matches(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db, "--metrics", "127.0.0.1:0")
    ladder.start()
    store = open_store(db)
    try:
        state = json.loads((ladder.folder / "cirulla-ladder.json").read_text())
        address = state["metrics"]
        ladder.cli("add", "r1", "random")
        ladder.cli("add", "g1", "greedy")

        def finished() -> int:
            return int(scrape(address).get("cirulla_ladder_matches_finished_total{queue=2p}", 0))

        wait_for(lambda: finished() >= 2, 180, "two finished ladder matches")
        samples = scrape(address)
        assert samples["cirulla_matches_finished_total"] >= 2  # the embedded match server's
        assert samples["cirulla_decisions_total"] > 0
        assert samples["cirulla_decision_seconds_count"] > 0
        assert samples["cirulla_records_written_total"] >= 2
        assert samples["cirulla_ladder_matches{status=finished}"] >= 2
        assert samples["cirulla_ladder_bots{state=active}"] == 2
        assert samples["cirulla_ladder_workers_live"] == 1
        assert samples["cirulla_ladder_worker_slots"] == 4
        assert "cirulla_ladder_queue_depth{queue=2p}" in samples
        assert "cirulla_ladder_worker_leases" in samples
        assert samples["cirulla_ladder_bot_processes_started_total"] >= 2
        restarts = [
            f"cirulla_ladder_bot_restarts_total{{reason={r}}}" for r in ("crash", "duplicate_twin")
        ]
        assert all(samples[name] >= 0 for name in restarts)
        assert samples[restarts[0]] == samples.get(
            "cirulla_ladder_seat_faults_total{kind=crash}", 0
        )
        assert samples["cirulla_ladder_bot_deactivations_total"] == 0
        # the gauges are the database's: the same counts the store gives (read until
        # nothing moved between the two reads)
        ladder.cli("pause", "r1")

        def agree() -> bool:
            waiting = store.waiting()
            seen = scrape(address)
            return (
                store.waiting() == waiting
                and seen["cirulla_ladder_queue_depth{queue=2p}"] == waiting
                and seen["cirulla_ladder_bots{state=paused}"] == 1
            )

        wait_for(agree, 60, "the scraped queue depth to be the store's")
    finally:
        ladder.stop()
        store.engine.dispose()
