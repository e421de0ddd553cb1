"""Every error the server reports, and the ONE table mapping errors to gRPC status codes.

Domain modules raise ``ServerError`` subclasses (or let the rules core's errors through);
the servicer turns any of them into a status with ``status_for``. Errors inside the Play
stream about an action become ``ActionRejected`` messages, whose reason comes from
``reject_reason_for`` beside it, so a new error type is mapped in one place.
"""

from __future__ import annotations

import grpc

from cirulla.rules import (
    CardError,
    CirullaError,
    DeckError,
    IllegalActionError,
    InvalidActionError,
    OptionError,
)


class ServerError(Exception):
    """Bad request detected by the server itself (not by the rules core)."""


class NotFound(ServerError):
    pass


class Unauthenticated(ServerError):
    pass


class PermissionDenied(ServerError):
    pass


class AlreadyExists(ServerError):
    pass


class InvalidArgument(ServerError):
    pass


class FailedPrecondition(ServerError):
    pass


class Unavailable(ServerError):
    pass


class ResourceExhausted(ServerError):
    """A limit of an open server (creation rate, live matches) is reached: retry later."""


_STATUS: tuple[tuple[type[Exception], grpc.StatusCode], ...] = (
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (AlreadyExists, grpc.StatusCode.ALREADY_EXISTS),
    (InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
    (FailedPrecondition, grpc.StatusCode.FAILED_PRECONDITION),
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
    (ResourceExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (IllegalActionError, grpc.StatusCode.FAILED_PRECONDITION),
    (OptionError, grpc.StatusCode.INVALID_ARGUMENT),
    (DeckError, grpc.StatusCode.INVALID_ARGUMENT),
    (CardError, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidActionError, grpc.StatusCode.INVALID_ARGUMENT),
    (CirullaError, grpc.StatusCode.INVALID_ARGUMENT),
)


def status_for(exc: Exception) -> grpc.StatusCode:
    for kind, code in _STATUS:
        if isinstance(exc, kind):
            return code
    return grpc.StatusCode.INTERNAL


class Rejection(Exception):
    """A SubmitAction the session refuses; ``reason`` is a RejectReason name (lower case)."""

    def __init__(self, reason: str, rule: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.rule = rule
        self.message = message


def reject_reason_for(exc: Exception) -> tuple[str, str]:
    """(RejectReason name, rule) for an error raised while checking a submitted action."""
    # ``rule`` is set only for ILLEGAL, and only to a name of ILLEGAL_RULES (play.proto).
    if isinstance(exc, Rejection):
        return exc.reason, exc.rule if exc.reason == "illegal" else ""
    if isinstance(exc, IllegalActionError):
        return "illegal", exc.rule
    return "invalid", ""
