"""Is there such a match on such a server? Asked before the full-screen UI starts.

Why: an error drawn inside Textual's alternate screen vanishes with it, and the command
then exits 0. A wrong match id, a closed port or an aborted match is one line on
stderr and a non-zero exit, before any screen is drawn.
"""

from __future__ import annotations

import grpc

from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc

TIMEOUT_S = 10.0


def match_problem(address: str, match_id: str, *, joining: bool = False, token: str = "") -> str:
    """Why ``match_id`` on ``address`` cannot be watched (or joined): "" when it can.
    ``token``: the seat's, when joining (a duplicate twin is shown to its seats only)."""
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    try:
        with grpc.insecure_channel(address) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            match = stub.GetMatch(
                match_service_pb2.GetMatchRequest(match_id=match_id),
                timeout=TIMEOUT_S,
                metadata=metadata,
            ).match
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        detail = exc.details() if hasattr(exc, "details") else str(exc)
        if code == grpc.StatusCode.UNAVAILABLE:
            return f"no match server answers at {address} ({detail})"
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"the match server at {address} did not answer within {TIMEOUT_S:.0f} s"
        if code == grpc.StatusCode.NOT_FOUND:
            return f"{address} has no match {match_id!r} (match ids look like m-1-3fa2b1)"
        return f"{address} refused: {code.name if code else '?'}: {detail}"
    except ValueError as exc:  # an address gRPC cannot parse
        return f"--server {address!r}: {exc}"
    if match.status == match_pb2.MATCH_STATUS_ABORTED:
        why = f": {match.abort_reason}" if match.abort_reason else ""
        return f"match {match_id} was aborted{why}"
    if joining and match.status == match_pb2.MATCH_STATUS_FINISHED:
        return f"match {match_id} is over: there is no seat to take"
    return ""
