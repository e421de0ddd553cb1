"""A cheating bot for the tests: plays greedy, and on every decision tries to read the
cards of the other games on its server (records, spectating), writing what it got.

Run: python tests/programs/cheater.py HOST:PORT MATCH_ID TOKEN REPORT.json [TWIN_ID ...]
The report lists every match and record summary listed, every record fetched (with its
decks), every seat name read and every refusal, so the test can assert that nothing of a
twin reached it mid-match (TWIN_ID: ids it asks GetMatch for without listing them).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from cirulla.bots.kit import run_bot
from cirulla.rules import Action, View
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc


def snoop(stub: Any, own_match: str, report: dict[str, Any], guessed: list[str]) -> None:
    """Everything a seat without the admin token can try, mid-match. ``guessed``: match
    ids it knows without listing them (a ladder's public pages show every match's id)."""
    listed = stub.ListRecords(match_service_pb2.ListRecordsRequest(), timeout=10)
    report["listed"] += [r.record_id for r in listed.records]
    matches = list(stub.ListMatches(match_service_pb2.ListMatchesRequest(), timeout=10).matches)
    report["matches_listed"] += [m.match_id for m in matches]
    for match_id in guessed:
        try:
            got = stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=match_id), timeout=10)
            matches.append(got.match)
            report["names_seen"] += [s.name for s in got.match.seats]
        except grpc.RpcError as exc:
            report["get_match_refused"].append(f"{exc.code().name}: {exc.details()}")
            # and its records and stream, by id
            matches.append(
                match_pb2.Match(match_id=match_id, status=match_pb2.MATCH_STATUS_FINISHED)
            )
    for m in matches:
        if m.match_id == own_match:
            continue
        for game in range(1, 3):
            try:
                rec = stub.GetRecord(
                    match_service_pb2.GetRecordRequest(record_id=f"{m.match_id}-g{game}"),
                    timeout=10,
                ).record
                report["fetched"].append(
                    {"record_id": rec.record_id, "decks": sum(len(d.decks) for d in rec.deals)}
                )
            except grpc.RpcError as exc:
                report["refused"].append(f"{exc.code().name}: {exc.details()}")
        if (
            m.status == match_pb2.MATCH_STATUS_FINISHED
            or m.status == match_pb2.MATCH_STATUS_IN_PROGRESS
        ):
            try:
                stream = stub.Spectate(
                    match_service_pb2.SpectateRequest(match_id=m.match_id), timeout=10
                )
                report["spectated"] += [str(msg.WhichOneof("body")) for msg in stream]
            except grpc.RpcError as exc:
                report["spectate_refused"].append(f"{exc.code().name}: {exc.details()}")


def main() -> None:
    server, match_id, token, out = sys.argv[1:5]
    guessed = sys.argv[5:]
    report: dict[str, Any] = {
        "listed": [],
        "matches_listed": [],
        "names_seen": [],
        "get_match_refused": [],
        "fetched": [],
        "refused": [],
        "spectated": [],
        "spectate_refused": [],
        "decisions": 0,
    }
    channel = grpc.insecure_channel(server)
    stub = match_service_pb2_grpc.MatchServiceStub(channel)

    def decide(view: View, legal: Sequence[Action], time_left: float | None) -> int:
        if report["decisions"] < 3:
            snoop(stub, match_id, report, guessed)
            Path(out).write_text(json.dumps(report), encoding="utf-8")
        report["decisions"] += 1
        return max(range(len(legal)), key=lambda i: len(legal[i].captured))

    run_bot(decide, server=server, match_id=match_id, token=token, name="cheater")
    Path(out).write_text(json.dumps(report), encoding="utf-8")
    channel.close()


if __name__ == "__main__":
    main()
