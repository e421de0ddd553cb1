"""Cirulla: rules engine, gRPC match server, bots and tournament runner."""

__version__ = "0.1.0"
PROTOCOL_VERSION = "cirulla.v1/1"


def protocol_compatible(version: str, ours: str = PROTOCOL_VERSION) -> bool:
    """The one version rule of the kit and the server: the major version must match.

    A protocol version is ``MAJOR/MINOR`` (``cirulla.v1/1``); minor versions only add
    (new fields, new messages), so any ``cirulla.v1/N`` talks to any other.
    """
    return version.split("/")[0] == ours.split("/")[0]
